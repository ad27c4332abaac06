"""What a queue card says: stores by the names the other pages use, a
refusal naming the item it concerns, and characters that draw nothing
shown in the diff, escaped."""

import pytest

from memory_app.actors import Actor
from memory_app.dreams.runner import dream_execute
from memory_app.models import DreamJob, DreamReviewItem
from memory_app.services.principals import system_grant_set
from memory_app.services.promote import memory_propose_promotion
from memory_app.services.stores import store_workspace_ensure
from review_app.diffs import build_diff, shown
from tests.factories import UserFactory, make_document
from tests.review_app.test_queue import draft_with_embedding, propose, unit

pytestmark = pytest.mark.django_db

SECRET = "AKIAIOSFODNN7EXAMPLQ"
RESTART = "To restart payments, roll back the configmap and restart the deployment in prod."


@pytest.fixture
def agent(db):
    return UserFactory(username="agent", service_account=True)


def test_a_merge_card_names_the_system_store_as_other_pages_do(
    client, reviewer, django_assert_max_num_queries
):
    store = system_grant_set(system_slug="payments-api", team="sre", level="read").system.store
    make_document(store, "notes/a", RESTART, title="Restart payments", trust="admin_approved")
    make_document(store, "notes/b", RESTART + "\nCheck errors.", title="Restart payments")
    dream_execute(DreamJob.objects.create(kind="compact").pk)
    assert DreamReviewItem.objects.filter(action="merge").count() == 1
    client.force_login(reviewer)
    # As many as any merge card costs: naming the stores asks nothing more.
    with django_assert_max_num_queries(14):
        html = client.get("/queue/").content.decode()
    related = html.split('<ul class="related">')[1].split("</ul>")[0]
    assert "<code>payments-api/notes/b</code>" in related
    assert store.slug not in related


def test_similar_memory_names_the_system_and_not_its_stores_slug(
    client, reviewer, agent, django_assert_max_num_queries
):
    grant = system_grant_set(system_slug="payments-api", team="sre", level="manage")
    agent.groups.add(grant.team)
    store = grant.system.store
    make_document(store, "ops/near", "Close.", embedding=unit(0.8, 0.6))
    draft = draft_with_embedding(agent, unit(1.0))
    actor = Actor(user=agent, agent=agent, conversation=draft.store.conversation, run_id="run-s")
    memory_propose_promotion(
        actor=actor, document=draft, target_store="system:payments-api", rationale="r"
    )
    client.force_login(reviewer)
    with django_assert_max_num_queries(13):
        html = client.get("/queue/").content.decode()
    assert "Similar memory already in payments-api</h3>" in html
    related = html.split('<ul class="related">')[1].split("</ul>")[0]
    assert "<code>payments-api/ops/near</code>" in related
    assert store.slug not in related


def test_a_refusal_names_the_item_it_concerns(client, reviewer, agent):
    item_id = propose(agent, 0)
    client.force_login(reviewer)
    response = client.post(
        f"/queue/{item_id}/decide",
        {"action": "approve", "content": f"aws_access_key_id = {SECRET}"},
        HTTP_HX_REQUEST="true",
    )
    html = response.content.decode()
    assert 'data-decided=""' in html
    assert "Not decided: “Fix 0” (workspace_runbooks/fix/0). The safety scanner refused" in html
    assert SECRET not in html
    assert DreamReviewItem.objects.get(pk=item_id).status == "pending"


def test_a_bulk_refusal_names_each_item(client, reviewer, agent):
    ids = [propose(agent, n) for n in range(2)]
    client.force_login(reviewer)
    client.post("/queue/bulk", {"action": "reject", "note": SECRET, "items": ids})
    page = client.get("/queue/").content.decode()
    assert "Not decided: “Fix 0” (workspace_runbooks/fix/0)." in page
    assert "Not decided: “Fix 1” (workspace_runbooks/fix/1)." in page


def test_a_hostile_title_in_a_refusal_stays_text(client, reviewer, agent):
    item_id = propose(agent, 0)
    DreamReviewItem.objects.filter(pk=item_id).update(proposed_title="<b>bold</b>")
    client.force_login(reviewer)
    response = client.post(
        f"/queue/{item_id}/decide",
        {"action": "approve", "content": SECRET},
        HTTP_HX_REQUEST="true",
    )
    assert "“&lt;b&gt;bold&lt;/b&gt;”" in response.content.decode()


def test_an_invisible_character_shows_as_a_marker_in_the_diff(client, reviewer, agent):
    store = store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")
    make_document(store, "fix/0", "Call payments-api first.", title="Fix 0")
    propose(agent, 0, content="Call pay\u200bments-api first.\nThen \u202etxt.exe<b>.")
    client.force_login(reviewer)
    for layout in ("unified", "split"):
        html = client.get(f"/queue/?diff={layout}").content.decode()
        diff = html.split('<div class="diff-view"')[1].split("</table>")[0]
        assert (
            'pay<span class="invisible-char" title="zero width space">⟨U+200B⟩</span>ments'
        ) in diff
        assert '<span class="invisible-char" title="right-to-left override">⟨U+202E⟩</span>' in (
            diff
        )
        assert "\u200b" not in diff and "\u202e" not in diff
        assert "txt.exe&lt;b&gt;." in diff and "<b>" not in diff


def test_shown_escapes_text_around_the_markers():
    assert shown("a<\u2066>b") == (
        'a&lt;<span class="invisible-char" title="left-to-right isolate">⟨U+2066⟩</span>&gt;b'
    )
    assert shown("<plain & ascii>") == "&lt;plain &amp; ascii&gt;"
    assert shown("café ☕\ufe0f") == "café ☕\ufe0f"


def test_a_marked_change_holds_the_marker_too():
    diff = build_diff("payments-api\n", "pay\u200bments-api\n")
    assert (
        '<mark>pay<span class="invisible-char" title="zero width space">⟨U+200B⟩</span>'
        "ments</mark>-api"
    ) in diff.unified_html
