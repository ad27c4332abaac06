"""The review queue page: access, content, decisions, escaping, query counts."""

import json
import random

import pytest
from django.utils import timezone

from benchmarks.loading import bulk_load, bulk_pending_promotions
from memory_app.actors import Actor
from memory_app.dreams.runner import dream_execute
from memory_app.models import EMBEDDING_DIMENSIONS, DreamJob, DreamReviewItem, MemoryDocument, Trust
from memory_app.services.conversations import conversation_open
from memory_app.services.promote import memory_propose_promotion, promotion_reject
from memory_app.services.remember import RememberInput, memory_remember
from memory_app.services.stores import store_workspace_ensure
from review_app.views_queue import QUEUE_CHANGED
from tests.factories import UserFactory, WorkspaceStoreFactory, make_document
from tests.review_app.test_deletions import request_deletion

pytestmark = pytest.mark.django_db

XSS = "<img src=x onerror=alert(1)><script>alert(2)</script>"


def propose(
    agent,
    n: int = 0,
    content: str = "Roll back the configmap, then verify.",
    target: str = "workspace_runbooks",
) -> str:
    conversation = conversation_open(user=agent, external_id=f"q-{agent.pk}-{n}")
    actor = Actor(user=agent, agent=agent, conversation=conversation, run_id=f"run-{n}")
    written = memory_remember(
        actor=actor,
        data=RememberInput(
            store="conversation", path=f"fix/{n}", title=f"Fix {n}", content=content
        ),
    )
    proposal = memory_propose_promotion(
        actor=actor,
        document=written.document,
        target_store=target,
        rationale=f"Worked twice ({n}).",
    )
    return str(proposal.item.pk)


def many_pending(agent, count: int, seed: int) -> None:
    """`count` pending promotions into workspace_runbooks, loaded in bulk."""
    conversation = conversation_open(user=agent, external_id=f"many-{seed}").store
    bulk_load([(conversation, Trust.AGENT_DRAFT)] * count, agent, random.Random(seed), embed=False)
    drafts = list(MemoryDocument.objects.filter(store=conversation))
    bulk_pending_promotions(
        drafts, store_workspace_ensure(slug="workspace_runbooks", name="R"), agent
    )


@pytest.fixture
def agent(db):
    return UserFactory(username="agent", service_account=True)


@pytest.mark.parametrize(("who", "status"), [("reviewer", 200), ("owner", 403), ("agent", 403)])
def test_only_reviewers_see_the_queue(client, reviewer, owner, agent, who, status):
    client.force_login({"reviewer": reviewer, "owner": owner, "agent": agent}[who])
    assert client.get("/queue/").status_code == status


@pytest.mark.parametrize("query", ["?status=rejected", "?status=approved&proposer=agent"])
def test_every_tab_needs_the_review_right(client, owner, agent, query):
    item_id = propose(agent)
    client.force_login(owner)
    response = client.get(f"/queue/{query}")
    assert response.status_code == 403
    assert item_id not in response.content.decode()


def test_the_queue_requires_login(client):
    assert client.get("/queue/").status_code == 302


def test_an_empty_queue_says_so(client, reviewer):
    client.force_login(reviewer)
    assert b"Nothing to review" in client.get("/queue/").content


def test_items_show_rationale_diff_and_provenance(client, reviewer, agent):
    propose(agent)
    client.force_login(reviewer)
    html = client.get("/queue/").content.decode()
    assert "Worked twice (0)." in html
    assert "workspace_runbooks/fix/0" in html
    assert "Roll back the configmap, then verify." in html
    assert "run-0" in html and "q-" in html
    assert 'hx-get="/queue/count" hx-trigger="load, queue-changed from:body"' in html


def test_memory_content_is_shown_as_text(client, reviewer, agent):
    propose(agent, content=f"Harmless note {XSS}")
    client.force_login(reviewer)
    html = client.get("/queue/").content.decode()
    assert XSS not in html
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html


def test_approving_from_the_page_lands_the_document(client, reviewer, agent):
    item_id = propose(agent)
    client.force_login(reviewer)
    response = client.post(f"/queue/{item_id}/decide", {"action": "approve", "note": "ok"})
    assert response.status_code == 302
    document = MemoryDocument.objects.get(store__slug="workspace_runbooks", path="fix/0")
    assert document.trust == "admin_approved"
    follow = client.get("/queue/")
    assert b"Nothing to review" in follow.content
    assert b"Item approved." in follow.content


def test_edit_then_approve_applies_the_edit(client, reviewer, agent):
    item_id = propose(agent)
    client.force_login(reviewer)
    client.post(f"/queue/{item_id}/decide", {"action": "approve", "content": "Edited."})
    assert MemoryDocument.objects.get(path="fix/0", store__slug="workspace_runbooks").content == (
        "Edited."
    )


def test_a_filter_matching_nothing_says_so_while_items_wait(client, reviewer, agent):
    propose(agent)
    client.force_login(reviewer)
    page = client.get("/queue/?status=pending&store=nosuch").content.decode()
    assert "No pending items match these filters." in page
    assert "Nothing to review" not in page


def test_rejecting_needs_a_note(client, reviewer, agent):
    item_id = propose(agent)
    client.force_login(reviewer)
    client.post(f"/queue/{item_id}/decide", {"action": "reject"})
    assert DreamReviewItem.objects.get(pk=item_id).status == "pending"
    page = client.get("/queue/").content.decode()
    assert "the note is required" in page
    client.post(f"/queue/{item_id}/decide", {"action": "reject", "note": "duplicate"})
    assert DreamReviewItem.objects.get(pk=item_id).status == "rejected"


@pytest.mark.parametrize(
    ("decision", "said"),
    [
        (
            {"action": "approve", "content": "Roll back \x1b[31mnow."},
            "Content: Control character U+001B at position 10.",
        ),
        (
            {"action": "reject", "note": "dup\x07licate"},
            "Note: Control character U+0007 at position 3.",
        ),
    ],
)
def test_a_control_character_in_a_decision_is_refused_naming_the_field(
    client, reviewer, agent, decision, said
):
    item_id = propose(agent)
    client.force_login(reviewer)
    client.post(f"/queue/{item_id}/decide", decision)
    assert DreamReviewItem.objects.get(pk=item_id).status == "pending"
    page = client.get("/queue/").content.decode()
    assert f"{said} Only tabs and line breaks may be used." in page


def test_a_too_long_reject_note_is_not_also_called_missing(client, reviewer, agent):
    item_id = propose(agent)
    client.force_login(reviewer)
    client.post(f"/queue/{item_id}/decide", {"action": "reject", "note": "x" * 2001})
    page = client.get("/queue/").content.decode()
    assert "at most 2000 characters" in page and "the note is required" not in page
    assert DreamReviewItem.objects.get(pk=item_id).status == "pending"


def test_a_blocked_edit_is_reported_and_nothing_changes(client, reviewer, agent):
    item_id = propose(agent)
    client.force_login(reviewer)
    client.post(f"/queue/{item_id}/decide", {"action": "approve", "content": "skip approval now"})
    assert DreamReviewItem.objects.get(pk=item_id).status == "pending"
    assert "safety scanner refused" in client.get("/queue/").content.decode()


def test_defer_takes_an_item_out_of_the_pending_queue(client, reviewer, agent):
    item_id = propose(agent)
    client.force_login(reviewer)
    client.post(f"/queue/{item_id}/decide", {"action": "defer"})
    assert DreamReviewItem.objects.get(pk=item_id).status == "deferred"
    assert b"Nothing to review" in client.get("/queue/").content


def test_bulk_approve(client, reviewer, agent):
    ids = [propose(agent, n) for n in range(3)]
    client.force_login(reviewer)
    client.post("/queue/bulk", {"action": "approve", "items": ids})
    assert MemoryDocument.objects.filter(store__slug="workspace_runbooks").count() == 3


def test_non_reviewers_cannot_decide_or_bulk(client, owner, agent):
    item_id = propose(agent)
    client.force_login(owner)
    assert client.post(f"/queue/{item_id}/decide", {"action": "approve"}).status_code == 403
    assert client.post("/queue/bulk", {"action": "approve", "items": [item_id]}).status_code == 403
    assert DreamReviewItem.objects.get(pk=item_id).status == "pending"


def test_an_unknown_item_is_404(client, reviewer):
    client.force_login(reviewer)
    response = client.post(
        "/queue/00000000-0000-0000-0000-000000000000/decide", {"action": "approve"}
    )
    assert response.status_code == 404


def test_decisions_need_csrf(reviewer, agent):
    from django.test import Client

    item_id = propose(agent)
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(reviewer)
    response = strict.post(f"/queue/{item_id}/decide", {"action": "approve"})
    assert response.status_code == 403
    # A page of the app that says what to do, not Django's bare refusal.
    html = response.content.decode()
    assert "<title>Not allowed · Agent Memory Admin</title>" in html
    assert "Reload the page (log in again if asked) and send it again." in html
    assert "Ask an administrator" not in html
    assert DreamReviewItem.objects.get(pk=item_id).status == "pending"


def test_a_cards_content_preview_loads_when_opened(
    client, reviewer, agent, django_assert_max_num_queries
):
    item_id = propose(agent, content="# Restart\n\nRoll back the configmap.")
    client.force_login(reviewer)
    html = client.get("/queue/").content.decode()
    content_url = f"/queue/{item_id}/content"
    assert f'hx-get="{content_url}" hx-trigger="toggle once"' in html
    assert f'<a href="{content_url}">Open the proposed content</a>' in html
    assert "<h1>Restart</h1>" not in html
    # Session, user, rights (3), the item and the navigation's team policy.
    with django_assert_max_num_queries(7):
        fragment = client.get(content_url, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in fragment
    assert "<h1>Restart</h1>" in fragment
    assert "# Restart" in fragment  # the source, one click away
    page = client.get(content_url).content.decode()
    assert "<html" in page and "<h1>Restart</h1>" in page
    assert "workspace_runbooks/fix/0" in page


@pytest.mark.parametrize(("who", "status"), [("reviewer", 200), ("owner", 403), ("agent", 403)])
def test_only_reviewers_read_a_proposals_content(client, reviewer, owner, agent, who, status):
    item_id = propose(agent)
    client.force_login({"reviewer": reviewer, "owner": owner, "agent": agent}[who])
    response = client.get(f"/queue/{item_id}/content")
    assert response.status_code == status
    assert ("Roll back the configmap" in response.content.decode()) == (status == 200)


def test_a_deletion_request_has_no_content_page_on_the_queue(client, reviewer, owner):
    _, item_id = request_deletion(owner)
    client.force_login(reviewer)
    assert client.get(f"/queue/{item_id}/content").status_code == 404
    unknown = "/queue/00000000-0000-0000-0000-000000000000/content"
    assert client.get(unknown).status_code == 404


def test_htmx_gets_only_the_rows(client, reviewer, agent):
    propose(agent)
    client.force_login(reviewer)
    html = client.get("/queue/", HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in html and "Worked twice" in html


def test_the_live_count(client, reviewer, agent):
    propose(agent, 0)
    propose(agent, 1)
    client.force_login(reviewer)
    assert client.get("/queue/count").content == b"2"


def test_the_queue_page_is_bounded_in_queries(
    client, reviewer, agent, django_assert_max_num_queries
):
    for n in range(30):
        propose(agent, n)
    client.force_login(reviewer)
    # The same 13 for any number of promotions: session, user, rights (3), tab
    # counts (which also size the page), the page, the stores it names,
    # targets, usage, the drafts' source refs, similar memory, and the
    # navigation's team policy. Merges and supersessions add one: the
    # documents they cover.
    with django_assert_max_num_queries(13):
        response = client.get("/queue/")
    assert response.content.decode().count("data-row data-item=") == 25


def test_the_queue_stays_bounded_with_500_pending(
    client, reviewer, agent, django_assert_max_num_queries
):
    many_pending(agent, 500, seed=3)
    client.force_login(reviewer)
    for url in ("/queue/", "/queue/?page=20", "/queue/count"):
        with django_assert_max_num_queries(13):
            response = client.get(url)
        assert response.status_code == 200
    assert "Page 20 of 20" in client.get("/queue/?page=20").content.decode()


def test_items_show_related_memory_by_action(
    client, reviewer, agent, django_assert_max_num_queries
):
    store = WorkspaceStoreFactory(slug="dup_runbooks")
    text = "To restart payments, roll back the configmap and restart the deployment in prod."
    make_document(store, "runbooks/a", text, title="Restart payments", trust="admin_approved")
    b = make_document(store, "runbooks/b", text + "\nCheck errors.", title="Restart payments")
    dream_execute(DreamJob.objects.create(kind="compact").pk)
    client.force_login(reviewer)
    with django_assert_max_num_queries(14):
        html = client.get("/queue/").content.decode()
    assert "Merges these; approving supersedes all but <code>runbooks/a</code>" in html
    link = f'<a href="/documents/{b.pk}/">Restart payments</a> <code>dup_runbooks/runbooks/b</code>'
    assert link in html


# Tabs and filters -----------------------------------------------------------


def rows_in(html: str) -> int:
    return html.count("data-row data-item=")


def test_deferred_items_keep_their_own_tab_and_can_still_be_decided(client, reviewer, agent):
    kept, deferred = propose(agent, 0), propose(agent, 1)
    client.force_login(reviewer)
    client.post(f"/queue/{deferred}/decide", {"action": "defer", "note": "ask the owner"})
    pending = client.get("/queue/").content.decode()
    assert f"item-{kept}" in pending and f"item-{deferred}" not in pending
    html = client.get("/queue/?status=deferred").content.decode()
    assert f"item-{deferred}" in html and f"item-{kept}" not in html
    assert "Deferred with the note “ask the owner”" in html
    assert "data-approve" in html and "data-defer" not in html
    assert '>Pending <span class="count">1</span>' in html
    assert '>Deferred <span class="count">1</span>' in html
    client.post(f"/queue/{deferred}/decide", {"action": "approve"})
    assert DreamReviewItem.objects.get(pk=deferred).status == "approved"


def test_decided_tabs_show_who_decided_why_and_no_actions(client, reviewer, agent):
    approved, rejected = propose(agent, 0), propose(agent, 1)
    client.force_login(reviewer)
    client.post(f"/queue/{approved}/decide", {"action": "approve", "note": "good"})
    client.post(f"/queue/{rejected}/decide", {"action": "reject", "note": "too <b>vague</b>"})
    html = client.get("/queue/?status=approved").content.decode()
    assert f"item-{approved}" in html and f"item-{rejected}" not in html
    assert "Approved by reviewer" in html and "“good”" in html
    assert "data-approve" not in html and 'id="bulk"' not in html
    html = client.get("/queue/?status=rejected").content.decode()
    assert f"item-{rejected}" in html and "Rejected by reviewer" in html
    assert "too &lt;b&gt;vague&lt;/b&gt;" in html


def test_filters_narrow_by_store_proposer_run_and_action(client, reviewer, agent):
    other = UserFactory(username="other-agent", service_account=True)
    store_workspace_ensure(slug="workspace_conventions", name="Conventions")
    runbook = propose(agent, 0)
    convention = propose(agent, 1, target="workspace_conventions")
    by_other = propose(other, 2)
    client.force_login(reviewer)

    def shown(query: str) -> set[str]:
        html = client.get(f"/queue/?{query}").content.decode()
        return {i for i in (runbook, convention, by_other) if f"item-{i}" in html}

    assert shown("") == {runbook, convention, by_other}
    assert shown("store=workspace_conventions") == {convention}
    assert shown("proposer=other-agent") == {by_other}
    assert shown("run=run-0") == {runbook}
    assert shown("action=promote&proposer=agent") == {runbook, convention}
    assert shown("action=merge") == set()
    assert shown("store=workspace_runbooks&run=run-1") == set()


def test_an_invalid_filter_is_reported_and_the_others_still_apply(client, reviewer, agent):
    propose(agent, 0)
    propose(agent, 1)
    client.force_login(reviewer)
    response = client.get("/queue/?action=drop-table&run=run-1")
    assert response.status_code == 200
    html = response.content.decode()
    assert "That filter was ignored." in html
    assert rows_in(html) == 1


def test_pages_and_tabs_keep_the_filters(client, reviewer, agent):
    many_pending(agent, 30, seed=5)
    client.force_login(reviewer)
    html = client.get("/queue/?proposer=agent&store=workspace_runbooks").content.decode()
    assert rows_in(html) == 25
    assert 'href="?proposer=agent&amp;store=workspace_runbooks&amp;page=2"' in html
    assert 'href="?proposer=agent&amp;store=workspace_runbooks&amp;status=deferred"' in html
    second = client.get("/queue/?proposer=agent&store=workspace_runbooks&page=2")
    assert rows_in(second.content.decode()) == 5


@pytest.mark.parametrize("status", ["pending", "deferred", "approved", "rejected"])
def test_every_tab_is_bounded_in_queries(
    client, reviewer, agent, status, django_assert_max_num_queries
):
    many_pending(agent, 60, seed=7)
    DreamReviewItem.objects.update(
        status=status, decided_by=reviewer, decided_at=timezone.now(), decision_note="n"
    )
    client.force_login(reviewer)
    with django_assert_max_num_queries(13):
        response = client.get(f"/queue/?status={status}&proposer=agent")
    assert rows_in(response.content.decode()) == 25


# Decisions: the note rule and the event badges listen for --------------------


def test_a_reject_without_a_note_decides_nothing_alone_or_in_bulk(client, reviewer, agent):
    ids = [propose(agent, n) for n in range(2)]
    client.force_login(reviewer)
    response = client.post(f"/queue/{ids[0]}/decide", {"action": "reject", "note": "   "})
    assert response.status_code == 302
    client.post("/queue/bulk", {"action": "reject", "items": ids})
    assert set(DreamReviewItem.objects.values_list("status", flat=True)) == {"pending"}
    html = client.get("/queue/").content.decode()
    assert html.count("the note is required") == 2


def test_a_plain_post_goes_back_to_the_same_tab(client, reviewer, agent):
    item_id = propose(agent)
    client.force_login(reviewer)
    client.post(f"/queue/{item_id}/decide", {"action": "defer"})
    response = client.post(
        f"/queue/{item_id}/decide?status=deferred&run=run-0", {"action": "approve"}
    )
    assert response["Location"] == "/queue/?status=deferred&run=run-0"


def test_an_htmx_decision_names_what_it_decided_and_fires_queue_changed(client, reviewer, agent):
    item_id = propose(agent)
    client.force_login(reviewer)
    refused = client.post(f"/queue/{item_id}/decide", {"action": "reject"}, HTTP_HX_REQUEST="true")
    assert "HX-Trigger" not in refused
    assert 'data-decided=""' in refused.content.decode()
    assert "the note is required" in refused.content.decode()
    response = client.post(
        f"/queue/{item_id}/decide", {"action": "reject", "note": "dup"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    assert QUEUE_CHANGED in json.loads(response["HX-Trigger"])
    assert f'data-decided="{item_id}"' in response.content.decode()
    assert "Item rejected." in response.content.decode()
    item = DreamReviewItem.objects.get(pk=item_id)
    assert (item.status, item.decision_note) == ("rejected", "dup")


def test_an_htmx_bulk_decision_fires_queue_changed(client, reviewer, agent):
    ids = [propose(agent, n) for n in range(2)]
    client.force_login(reviewer)
    response = client.post(
        "/queue/bulk", {"action": "approve", "items": ids}, HTTP_HX_REQUEST="true"
    )
    assert QUEUE_CHANGED in json.loads(response["HX-Trigger"])
    assert f'data-decided="{ids[0]} {ids[1]}"' in response.content.decode()


def test_the_badges_listen_for_queue_changed(client, reviewer, owner, agent):
    propose(agent)
    request_deletion(owner)
    client.force_login(reviewer)
    html = client.get("/").content.decode()
    for url in ("/queue/count", "/deletions/count"):
        assert f'hx-get="{url}" hx-trigger="load, queue-changed from:body"' in html
    assert client.get("/queue/count").content == b"1"
    assert client.get("/deletions/count").content == b"1"


def test_the_deletion_badge_counts_only_what_this_person_may_decide(client, owner, outsider):
    request_deletion(owner)
    client.force_login(outsider)
    assert client.get("/deletions/count").content == b""
    client.force_login(owner)
    assert client.get("/deletions/count").content == b"1"
    assert client.get("/queue/count").content == b""


def test_the_badges_need_login(client):
    for url in ("/queue/count", "/deletions/count"):
        assert client.get(url).status_code == 302


# Similar memory ---------------------------------------------------------------


def unit(*head: float) -> list[float]:
    """A 384-dimension vector starting with `head`, normalised."""
    vector = [*head, *[0.0] * (EMBEDDING_DIMENSIONS - len(head))]
    norm = sum(v * v for v in vector) ** 0.5
    return [v / norm for v in vector]


@pytest.fixture
def near_and_far(agent):
    """A draft for fix/0 and, in the target store, its own target path, a
    near document (cosine 0.8) and an unrelated one (cosine 0.1)."""
    store = store_workspace_ensure(slug="workspace_runbooks", name="R")
    return {
        "target": make_document(store, "fix/0", "Old fix.", embedding=unit(1.0)),
        "near": make_document(store, "ops/near", "Close.", embedding=unit(0.8, 0.6)),
        "far": make_document(store, "ops/far", "Unrelated.", embedding=unit(0.1, 0.995)),
    }


def draft_with_embedding(agent, vector) -> MemoryDocument:
    actor = Actor(
        user=agent,
        agent=agent,
        conversation=conversation_open(user=agent, external_id="s"),
        run_id="run-s",
    )
    document = memory_remember(
        actor=actor, data=RememberInput(store="conversation", path="fix/0", content="New fix.")
    ).document
    MemoryDocument.objects.filter(pk=document.pk).update(embedding=vector)
    document.refresh_from_db()
    return document


def test_a_proposal_records_only_similar_memory_and_not_its_own_target(agent, near_and_far):
    draft = draft_with_embedding(agent, unit(1.0))
    actor = Actor(user=agent, agent=agent, conversation=draft.store.conversation, run_id="run-s")
    item = memory_propose_promotion(
        actor=actor, document=draft, target_store="workspace_runbooks", rationale="r"
    ).item
    assert list(item.related_documents.all()) == [near_and_far["near"]]


def test_the_card_lists_only_documents_above_the_similarity_floor(
    client, reviewer, agent, near_and_far
):
    draft = draft_with_embedding(agent, unit(1.0))
    actor = Actor(user=agent, agent=agent, conversation=draft.store.conversation, run_id="run-s")
    item = memory_propose_promotion(
        actor=actor, document=draft, target_store="workspace_runbooks", rationale="r"
    ).item
    # Links recorded before the floor existed: everything, the draft itself too.
    item.related_documents.set([*near_and_far.values(), draft])
    client.force_login(reviewer)
    html = client.get("/queue/").content.decode()
    related = html.split('<ul class="related">')[1].split("</ul>")[0]
    assert "workspace_runbooks/ops/near" in related and "80 % similar" in related
    assert "ops/far" not in related
    assert "fix/0" not in related


def _decided_meanwhile(item_id: str) -> None:
    """Another reviewer rejects `item_id` while this page still shows it."""
    other = UserFactory(username="other-reviewer", reviewer=True)
    promotion_reject(user=other, item_id=item_id, note="Seen already.")


@pytest.mark.parametrize("htmx", [True, False])
def test_a_bulk_decision_over_an_item_decided_meanwhile_says_what_it_did(
    client, reviewer, agent, htmx
):
    fresh, stale = propose(agent, 1), propose(agent, 2)
    _decided_meanwhile(stale)
    client.force_login(reviewer)
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    response = client.post(
        "/queue/bulk", {"action": "approve", "items": [fresh, stale]}, follow=True, **headers
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "1 item(s) approved." in html
    assert "1 item(s) were no longer open: decided by another reviewer, or withdrawn." in html
    assert DreamReviewItem.objects.get(pk=fresh).status == "approved"
    assert DreamReviewItem.objects.get(pk=stale).status == "rejected"
    if htmx:
        # Both cards leave the pending tab, and the badges count again.
        assert f'data-decided="{fresh} {stale}"' in html
        assert QUEUE_CHANGED in json.loads(response["HX-Trigger"])


def test_a_single_decision_over_an_item_decided_meanwhile_says_so(client, reviewer, agent):
    stale = propose(agent)
    _decided_meanwhile(stale)
    client.force_login(reviewer)
    response = client.post(f"/queue/{stale}/decide", {"action": "defer"}, HTTP_HX_REQUEST="true")
    assert "This item was no longer open" in response.content.decode()
    assert f'data-decided="{stale}"' in response.content.decode()
    assert DreamReviewItem.objects.get(pk=stale).status == "rejected"
