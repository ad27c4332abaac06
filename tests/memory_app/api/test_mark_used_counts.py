"""memory_mark_used counts what a run was given, once (API.md, DESIGN §4).

hit_count and last_used_at steer compaction's keep order and rotation, so
a repeat, an id the run was never given, or a document gone since must not
raise them.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from memory_app.actors import Actor
from memory_app.models import Conversation, DocState, MemoryDocument, MemoryUsage, Trust
from memory_app.services.context import memory_mark_used
from tests.factories import make_document

pytestmark = pytest.mark.django_db

KAFKA = (
    "Kafka consumer lag grows on the orders topic when a rebalance storm hits; raise "
    "session.timeout.ms and scale consumers to the partition count."
)
MESSAGE = "orders consumers are lagging behind on kafka in prod, what should I check?"


@pytest.fixture
def runbook(runbooks):
    return make_document(
        runbooks,
        path="kafka/lag",
        title="Kafka consumer lag",
        content=KAFKA,
        trust=Trust.ADMIN_APPROVED,
        doc_type="runbook",
    )


def injected(caller, message: str = MESSAGE, **body) -> set[str]:
    """The ids a memory_context call of `caller` injected."""
    documents = caller.ok("memory_context", {"message": message, **body})["documents"]
    return {d["id"] for d in documents}


def hits(document: MemoryDocument) -> int:
    document.refresh_from_db()
    return document.hit_count


def test_marking_an_id_again_in_the_same_run_counts_it_once(tools, runbook):
    assert str(runbook.pk) in injected(tools)
    assert tools.ok("memory_mark_used", {"ids": [str(runbook.pk), str(runbook.pk)]}) == {
        "updated": 1
    }
    assert tools.ok("memory_mark_used", {"ids": [str(runbook.pk)]}) == {"updated": 0}
    assert hits(runbook) == 1
    assert MemoryUsage.objects.get(document=runbook).hit is True


def test_an_id_the_run_was_never_given_counts_nothing(tools, runbook):
    assert tools.ok("memory_mark_used", {"ids": [str(runbook.pk)]}) == {"updated": 0}
    assert str(runbook.pk) in injected(tools)
    other_run = tools.with_headers(**{"X-Memory-Run": "run-2"})
    assert other_run.ok("memory_mark_used", {"ids": [str(runbook.pk)]}) == {"updated": 0}
    runbook.refresh_from_db()
    assert (runbook.hit_count, runbook.last_used_at) == (0, None)
    assert MemoryUsage.objects.get(document=runbook).hit is False


@pytest.mark.parametrize(
    "gone",
    [
        {"state": DocState.TOMBSTONED},
        {"expires_at": timezone.now() - timedelta(minutes=1)},
    ],
    ids=["tombstoned", "expired"],
)
def test_a_document_gone_since_its_injection_counts_nothing(tools, runbook, gone):
    assert str(runbook.pk) in injected(tools)
    MemoryDocument.objects.filter(pk=runbook.pk).update(**gone)
    assert tools.ok("memory_mark_used", {"ids": [str(runbook.pk)]}) == {"updated": 0}
    assert hits(runbook) == 0


def test_each_turn_that_was_given_a_document_can_count_it(tools, runbook):
    assert str(runbook.pk) in injected(tools)
    assert tools.ok("memory_mark_used", {"ids": [str(runbook.pk)]}) == {"updated": 1}
    assert str(runbook.pk) in injected(tools, "kafka consumer lag again on orders")
    assert tools.ok("memory_mark_used", {"ids": [str(runbook.pk)]}) == {"updated": 1}
    assert tools.ok("memory_mark_used", {"ids": [str(runbook.pk)]}) == {"updated": 0}
    assert hits(runbook) == 2


def test_without_a_run_the_conversations_injections_count(caller_for, agent, runbook):
    caller = caller_for(agent, run=None)
    assert str(runbook.pk) in injected(caller)
    assert caller.ok("memory_mark_used", {"ids": [str(runbook.pk)]}) == {"updated": 1}
    assert caller.ok("memory_mark_used", {"ids": [str(runbook.pk)]}) == {"updated": 0}
    assert hits(runbook) == 1


def test_marking_takes_the_same_statements_for_one_id_or_many(
    tools, agent, runbooks, django_assert_max_num_queries
):
    for n in range(40):
        make_document(
            runbooks,
            path=f"kafka/{n}",
            title=f"Kafka lag {n}",
            content=f"{KAFKA} Variant {n}.",
            trust=Trust.ADMIN_APPROVED,
        )
    # Written so the conversation exists; then loaded in turns within the budget.
    tools.ok(
        "memory_remember",
        {"store": "conversation", "title": "Lag", "content": "Lag again.", "doc_type": "note"},
        status=201,
    )
    given = set()
    for turn in range(8):
        given |= injected(tools, f"{MESSAGE} {turn}", max_docs=50, token_budget=2200)
    assert len(given) > 20
    actor = Actor(
        user=agent,
        agent=agent,
        conversation=Conversation.objects.get(external_id="conv-agent"),
        run_id="run-1",
    )
    one, *many = sorted(given)
    # The reader's group policy, the three statements, and the savepoint
    # of the transaction around them.
    with django_assert_max_num_queries(6):
        assert memory_mark_used(actor=actor, ids=[one]) == 1
    with django_assert_max_num_queries(6):
        assert memory_mark_used(actor=actor, ids=many) == len(many)
