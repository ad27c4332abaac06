"""Queue cards and document pages show a memory's metadata, evidence and
authors, all as text: agent-supplied tags, entities and refs never run."""

from datetime import UTC, datetime

import pytest

from memory_app.actors import Actor
from memory_app.models import DreamReviewItem, MemoryDocument
from memory_app.services.conversations import conversation_open
from memory_app.services.promote import memory_propose_promotion, promotion_approve
from memory_app.services.remember import RememberInput, memory_remember
from memory_app.services.stores import store_workspace_ensure
from memory_app.services.versions import SourceRef
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

XSS = "<img src=x onerror=alert(1)><script>alert(2)</script>"
ESCAPED = "&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;alert(2)&lt;/script&gt;"


@pytest.fixture
def agent(db):
    return UserFactory(username="agent-7", service_account=True)


def propose(agent, n: int = 0, target_path: str | None = None) -> str:
    store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")
    conversation = conversation_open(user=agent, external_id=f"meta-{n}")
    actor = Actor(user=agent, agent=agent, conversation=conversation, run_id=f"run-{n}")
    written = memory_remember(
        actor=actor,
        data=RememberInput(
            store="conversation",
            path=f"fix/{n}",
            title=f"Fix {n}",
            content=f"Roll back the configmap, then verify ({n}).",
            doc_type="runbook",
            recall_hint=f"When {XSS} restarts",
            tags=["ingress", XSS],
            entities={"service": "ingress-nginx", "resource": XSS},
            importance=8,
            expires_at=datetime(2031, 1, 2, 3, 4, tzinfo=UTC),
            source_refs=[
                SourceRef("incident", "INC-4411"),
                SourceRef("tool_call", "call-9"),
                SourceRef("url", "https://wiki.example.com/ingress?a=1&b=2"),
                SourceRef("url", "javascript:alert(3)"),
                SourceRef("url", f'https://x.example.com/" onmouseover="alert(4){XSS}'),
            ],
        ),
    )
    proposal = memory_propose_promotion(
        actor=actor,
        document=written.document,
        target_store="workspace_runbooks",
        target_path=target_path,
        rationale="Seen twice.",
    )
    return str(proposal.item.pk)


def assert_metadata_shown_safely(html: str) -> None:
    assert XSS not in html and 'onmouseover="alert' not in html
    assert ESCAPED in html
    for shown in ("runbook", "8/10", "2031-01-02 03:04", "ingress-nginx", "INC-4411", "call-9"):
        assert shown in html
    assert (
        '<a href="https://wiki.example.com/ingress?a=1&amp;b=2" rel="noopener noreferrer nofollow"'
        in html
    )
    assert 'href="javascript:' not in html and "<code>javascript:alert(3)</code>" in html
    assert 'href="https://x.example.com' not in html  # a quote in it: text, not a link


def test_a_queue_card_shows_the_drafts_metadata_as_text(client, reviewer, agent):
    propose(agent)
    client.force_login(reviewer)
    html = client.get("/queue/").content.decode()
    assert_metadata_shown_safely(html)
    assert "agent-7" in html
    draft = MemoryDocument.objects.get(path="fix/0")
    assert f'href="/documents/{draft.pk}/"' in html
    assert "conversation:meta-0/fix/0" in html


def test_the_document_page_shows_metadata_and_who_wrote_and_approved(client, reviewer, agent):
    item_id = propose(agent)
    promoted = promotion_approve(user=reviewer, item_id=item_id, note="ok")
    client.force_login(reviewer)
    html = client.get(f"/documents/{promoted.pk}/").content.decode()
    assert_metadata_shown_safely(html)
    assert "Written by</dt><dd>agent-7" in html
    assert "Approved by</dt><dd>reviewer" in html
    assert "approved by reviewer" in html  # the promote version in the history


def test_an_approval_with_edits_says_so(client, reviewer, agent):
    item_id = propose(agent)
    promoted = promotion_approve(
        user=reviewer, item_id=item_id, content="Restart the ingress pods, then check the 5xx."
    )
    client.force_login(reviewer)
    html = client.get(f"/documents/{promoted.pk}/").content.decode()
    assert "Approved by</dt><dd>reviewer, with edits" in html
    assert "approved by reviewer, with edits" in html


def test_an_approval_as_proposed_is_not_called_edited_after_the_draft_is_redacted(
    client, reviewer, agent
):
    item_id = propose(agent)
    promoted = promotion_approve(user=reviewer, item_id=item_id)
    DreamReviewItem.objects.filter(pk=item_id).update(proposed_content="[redacted]")
    client.force_login(reviewer)
    html = client.get(f"/documents/{promoted.pk}/").content.decode()
    assert "Approved by</dt><dd>reviewer</dd>" in html
    assert "with edits" not in html


def test_the_draft_page_shows_its_own_metadata(client, reviewer, agent):
    propose(agent)
    client.force_login(reviewer)
    draft = MemoryDocument.objects.get(path="fix/0")
    assert_metadata_shown_safely(client.get(f"/documents/{draft.pk}/").content.decode())


def test_the_document_page_is_bounded_however_long_the_history(
    client, reviewer, agent, django_assert_max_num_queries
):
    for n in range(12):
        promoted = promotion_approve(user=reviewer, item_id=propose(agent, n, "fix/0"))
    assert promoted.version == 12
    client.force_login(reviewer)
    with django_assert_max_num_queries(14):
        html = client.get(f"/documents/{promoted.pk}/").content.decode()
    assert html.count("approved by reviewer") == 12
