"""The usage job: never-used injections go to review, well-used drafts to promotion."""

import pytest

from memory_app.actors import Actor
from memory_app.dreams.runner import dream_execute
from memory_app.models import DreamJob, DreamReviewItem, MemoryDocument, MemoryUsage, Trust
from memory_app.services.context import memory_context_load
from memory_app.services.conversations import conversation_open
from memory_app.services.delete import deletion_decide
from memory_app.services.stores import store_for_user, store_workspace_ensure
from tests.factories import make_document

pytestmark = pytest.mark.django_db


def run() -> DreamJob:
    return dream_execute(DreamJob.objects.create(kind="usage").pk)


def inject(document, principal, *, times: int, hits: int = 0, conversations=None, runs=None):
    """`times` injections of the document's head; the first `hits` marked used."""
    for n in range(times):
        MemoryUsage.objects.create(
            run_id=runs[n % len(runs)] if runs else f"run-{n}",
            conversation=conversations[n % len(conversations)] if conversations else None,
            principal=principal,
            document=document,
            version=document.version,
            rank=1,
            score=0.5,
            block="trusted",
            tokens=20,
            hit=n < hits,
        )


@pytest.fixture
def chats(owner):
    return [conversation_open(user=owner, external_id=f"chat-{n}") for n in range(5)]


@pytest.fixture
def runbooks(db):
    return store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")


def test_a_memory_injected_often_and_never_used_is_proposed_for_review(
    owner, runbooks, chats, settings
):
    settings.MEMORY_USAGE_INJECTED_MIN = 20
    noise = make_document(
        runbooks, "pinned/holidays", "Office holidays list.", trust=Trust.ADMIN_APPROVED
    )
    useful = make_document(
        runbooks, "runbooks/rollback", "Roll back with helm.", trust=Trust.ADMIN_APPROVED
    )
    young = make_document(runbooks, "runbooks/new", "New runbook.", trust=Trust.ADMIN_APPROVED)
    inject(noise, owner, times=20, conversations=chats)
    inject(useful, owner, times=20, hits=1, conversations=chats)
    inject(young, owner, times=19, conversations=chats)

    job = run()
    assert job.stats["unused"] == 1 and job.stats["proposed"] == 1
    item = DreamReviewItem.objects.get(action="tombstone")
    assert item.source_document_id == noise.pk
    assert item.rationale.startswith(
        "Injected 20 times in 5 conversation(s) since v1 and never marked used: "
        "0 of 20 injections marked used (0%). Demote it"
    )
    assert MemoryDocument.objects.get(pk=noise.pk).state == "active"
    assert run().stats["proposed"] == 0


def trusted_part(text: str) -> str:
    """The `<memory_context>` block of a context, without the untrusted candidates."""
    return text.partition("<untrusted_memory_candidates>")[0]


def test_a_usage_review_only_asks_and_the_memory_stays_in_the_trusted_block(
    owner, runbooks, chats, settings
):
    """Never being cited is a guess at a memory's worth: until a person
    decides, agents keep receiving it as reviewed memory."""
    settings.MEMORY_USAGE_INJECTED_MIN = 5
    holidays = make_document(
        runbooks,
        "office/holidays",
        "The office is closed on public holidays and between Christmas and New Year.",
        title="Office holidays",
        trust=Trust.ADMIN_APPROVED,
    )
    inject(holidays, owner, times=5, conversations=chats)

    assert run().stats["proposed"] == 1
    assert DreamReviewItem.objects.get(action="tombstone", status="pending").source_document_id == (
        holidays.pk
    )
    built = memory_context_load(
        actor=Actor(user=owner, agent=owner), message="when is the office closed for holidays"
    ).built
    [entry] = [e for e in built.entries if e.document.pk == holidays.pk]
    assert entry.block == "trusted"
    assert "between Christmas and New Year" in trusted_part(built.text)
    assert 'state="constrained"' not in built.text


def test_pinned_conventions_are_not_reviewed_for_never_being_cited(owner, settings):
    """The seeded conventions are pinned: every turn carries them and few
    cite them. A day of turns leaves them pinned in the trusted block, with
    nothing for a reviewer to decide."""
    settings.MEMORY_USAGE_INJECTED_MIN = 3
    actor = Actor(user=owner, agent=owner)
    pinned = list(MemoryDocument.objects.filter(always_inject=True, trust=Trust.SYSTEM_SEEDED))
    assert pinned
    for message in ("deploy the api", "restart payments", "rotate the kafka certs"):
        memory_context_load(actor=actor, message=message)
    assert MemoryUsage.objects.filter(document__in=pinned, block="always").count() == 3 * len(
        pinned
    )

    job = run()
    assert job.stats["unused"] == 0
    assert not DreamReviewItem.objects.filter(action="tombstone").exists()
    built = memory_context_load(actor=actor, message="deploy the api").built
    for document in pinned:
        [entry] = [e for e in built.entries if e.document.pk == document.pk]
        assert entry.block == "always" and entry.trusted
        assert f'id="{document.pk}"' in trusted_part(built.text)
    assert "<untrusted_memory_candidates>" not in built.text


def test_a_declined_review_is_not_proposed_again_while_the_memory_is_unchanged(
    owner, reviewer, runbooks, chats, settings
):
    settings.MEMORY_USAGE_INJECTED_MIN = 5
    noise = make_document(runbooks, "pinned/holidays", "Office holidays list.")
    inject(noise, owner, times=5, conversations=chats)
    run()
    item = DreamReviewItem.objects.get(action="tombstone")
    deletion_decide(user=reviewer, item=item, confirm=False, note="Keep it, it is seasonal.")
    assert MemoryDocument.objects.get(pk=noise.pk).state == "active"
    inject(noise, owner, times=5, conversations=chats)
    again = run()
    assert again.stats["proposed"] == 0 and again.stats["already_decided"] == 1


def test_a_draft_used_across_conversations_is_proposed_for_promotion_with_its_evidence(
    owner, runbooks, chats
):
    preference = make_document(
        store_for_user(user=owner),
        "prefs/utc",
        "Write timestamps in UTC.",
        doc_type="user_preference",
    )
    inject(preference, owner, times=4, hits=3, conversations=chats[:3], runs=["a", "b", "c"])
    barely = make_document(store_for_user(user=owner), "prefs/dark", "Use dark mode.")
    inject(barely, owner, times=4, hits=2, conversations=chats[:2], runs=["a", "b"])

    job = run()
    assert job.stats["well_used"] == 1
    item = DreamReviewItem.objects.get(action="promote")
    assert item.source_document_id == preference.pk
    assert item.target_store == runbooks
    assert item.rationale == (
        "Marked used in 3 conversation(s) and 3 run(s): 3 of 4 injections marked used (75%); "
        "from owner (private)."
    )
    assert run().stats["well_used"] == 0
