"""memory_search on questions about a time: the calendar periods they name
find the memories written then, whatever the limit asked for."""

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from memory_app.models import MemoryDocument, Trust
from memory_app.selectors import candidates
from tests.factories import make_document

pytestmark = pytest.mark.django_db

# Friday 4 December 2026.
FRIDAY = datetime(2026, 12, 4, 15, tzinfo=UTC)
# Change notes from today, Sunday 29 November, Wednesday 25 November and 25 October.
CHANGES = {
    "changes/today": (0, "Raised the worker concurrency of the billing queue from 4 to 8."),
    "changes/sunday": (5.4, "Enabled gzip on the internal endpoints of the search gateway."),
    "changes/nov-25": (9, "Moved the nightly export to the read replica."),
    "changes/oct-25": (40, "Pinned the base image of the mailer to the patched release."),
}


@pytest.fixture
def friday(monkeypatch):
    monkeypatch.setattr(timezone, "now", lambda: FRIDAY)
    return FRIDAY


def _dated(store, path, content, age_days, **fields):
    document = make_document(store, path=path, content=content, **fields)
    then = FRIDAY - timedelta(days=age_days)
    MemoryDocument.objects.filter(pk=document.pk).update(created_at=then, updated_at=then)


def _paths(body):
    return [hit["path"] for hit in body["results"]]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("what did we change last month", {"changes/sunday", "changes/nov-25"}),
        ("what did we change in the last 7 days", {"changes/today", "changes/sunday"}),
        ("what did we change in the past 7 days", {"changes/today", "changes/sunday"}),
        ("what did we change last week", {"changes/sunday", "changes/nov-25"}),
    ],
)
def test_a_question_about_a_calendar_period_leads_with_its_memories(
    tools, runbooks, friday, question, expected
):
    for path, (age, content) in CHANGES.items():
        _dated(runbooks, path, content, age, title="Change")
    found = _paths(tools.ok("memory_search", {"query": question}))
    assert set(found[: len(expected)]) == expected, found


def test_the_first_results_of_a_question_about_time_do_not_depend_on_the_limit(
    tools, runbooks, friday
):
    """Many memories of last week: drafts nearer the question in meaning,
    and reviewed runbooks further from it, which rank first once found. A
    small limit must find them too, not only the nearest few."""
    for index in range(14):
        _dated(
            runbooks,
            f"drafts/{index}",
            f"Adjusted parameter {index} of the deploy pipeline.",
            6 + index % 4,
            title=f"Adjustment {index}",
        )
    for index, topic in enumerate(["DNS cache", "TLS certificates", "Kafka partitions"]):
        _dated(
            runbooks,
            f"runbooks/{index}",
            f"Runbook: how the {topic} are operated and verified on the platform.",
            7,
            title=f"{topic} runbook",
            trust=Trust.ADMIN_APPROVED,
            doc_type="runbook",
        )
    question = "what did we change last week"
    many = _paths(tools.ok("memory_search", {"query": question, "limit": 50}))
    few = _paths(tools.ok("memory_search", {"query": question, "limit": 3}))
    assert set(many[:3]) == {"runbooks/0", "runbooks/1", "runbooks/2"}
    assert few == many[:3]


def test_the_time_list_holds_a_floor_of_candidates_whatever_the_limit(
    tools, runbooks, friday, monkeypatch
):
    seen = []
    gather = candidates.gather

    def spy(*args, **kwargs):
        found = gather(*args, **kwargs)
        seen.append(sum("time" in item.sources for item in found))
        return found

    monkeypatch.setattr("memory_app.selectors.search.gather", spy)
    for index in range(candidates.TIME_CANDIDATES + 5):
        _dated(runbooks, f"notes/{index}", f"Note {index} about the rollout.", 8)
    tools.ok("memory_search", {"query": "what did we change last week", "limit": 1})
    assert seen == [candidates.TIME_CANDIDATES]
