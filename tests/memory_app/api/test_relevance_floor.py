"""Hybrid fusion as an agent sees it: the relevance floor and paraphrased questions.

A store much like a long conversation: an old reviewed runbook, recent change
notes of the same service and recent conversation turns of other services
that repeat a question's words without the answer (benchmarks/eval/hard.py
measures the same at scale).
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from memory_app.models import MemoryDocument, Trust
from tests.factories import make_document

pytestmark = pytest.mark.django_db

RATE = (
    "payments-api calls the partner API which allows 57 requests per second; beyond that it "
    "answers 429 with Retry-After. Use the token bucket client and honour Retry-After."
)
CHANGES = [
    "On payments-api we raised the worker concurrency from 4 to 8.",
    "On payments-api we enabled gzip on the internal endpoints.",
    "On payments-api we lowered the cache TTL to five minutes.",
    "On payments-api we doubled the connection pool of the replica client.",
    "On payments-api we moved the nightly export to the read replica.",
]
OTHERS = ("checkout", "ledger", "search")
CHATTER = "User: {svc} gets throttled by the external provider, is that normal?"
PARAPHRASE = "Can you remind me what to do when payments gets throttled by the external provider?"
NO_ANSWER = "How do we configure the GPU drivers on the payments build agents?"


def _aged(document, days: float) -> None:
    when = timezone.now() - timedelta(days=days)
    MemoryDocument.objects.filter(pk=document.pk).update(created_at=when, updated_at=when)


@pytest.fixture
def conversation_like(runbooks):
    runbook = make_document(
        runbooks,
        path="payments/rate",
        title="payments: upstream rate limits",
        content=RATE,
        trust=Trust.USER_AUTHORED,
        doc_type="service_pattern",
        entities={"service": "payments"},
    )
    _aged(runbook, 200)
    for days, change in enumerate(CHANGES, start=1):
        note = make_document(
            runbooks,
            path=f"payments/change-{days}",
            title="payments: change",
            content=change,
            trust=Trust.USER_AUTHORED,
            doc_type="fact",
            entities={"service": "payments"},
        )
        _aged(note, days)
    for index, service in enumerate(OTHERS):
        turn = make_document(
            runbooks,
            path=f"{service}/turn",
            title=f"{service}: conversation turn",
            content=CHATTER.format(svc=service),
            trust=Trust.USER_AUTHORED,
            doc_type="note",
        )
        _aged(turn, 2 + index)
    return runbook


def _paths(body) -> list[str]:
    return [hit["path"] for hit in body["results"]]


def test_a_paraphrase_finds_its_old_memory_among_the_first_five(tools, conversation_like):
    # Recent change notes of the same service and recent turns with the
    # question's very words must not bury the memory that answers it (a
    # recency weight of 0.10 put it eighth).
    body = tools.ok("memory_search", {"query": PARAPHRASE})
    assert "payments/rate" in _paths(body)[:5]


def test_a_question_no_memory_answers_gets_no_documents(tools, conversation_like):
    # Without the floor the same store does yield matches: the service's name.
    assert _paths(tools.ok("memory_search", {"query": NO_ANSWER, "mode": "text"}))
    assert _paths(tools.ok("memory_search", {"query": NO_ANSWER})) == []


def test_context_for_a_question_no_memory_answers_retrieves_nothing(tools, conversation_like):
    # Pinned conventions still come; no retrieved memory does.
    body = tools.ok("memory_context", {"message": NO_ANSWER})
    assert [d["block"] for d in body["documents"]] == ["always"] * len(body["documents"])
    assert "workspace_runbooks/" not in body["context"]


def test_an_answerable_question_still_reaches_the_context(tools, conversation_like):
    body = tools.ok("memory_context", {"message": PARAPHRASE})
    assert 'ref="workspace_runbooks/payments/rate"' in body["context"]


def test_a_ticket_id_clears_the_floor_even_in_a_long_question(tools, runbooks):
    # Few of the question's words are in the memory, but its identifier is.
    make_document(
        runbooks,
        path="incidents/ops-4007",
        title="Disk full on the ledger database",
        content="OPS-4007: a stale replication slot kept WAL; dropped it.",
        trust=Trust.USER_AUTHORED,
        doc_type="incident",
    )
    query = "Could you pull up what we wrote down for OPS-4007 the other week, please?"
    assert _paths(tools.ok("memory_search", {"query": query})) == ["incidents/ops-4007"]
