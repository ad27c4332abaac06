"""memory_remember's near-duplicate check: one changed value is a new memory.

Each case writes a note at one path of the conversation store and a second
at another path; a changed figure, a negation or a replaced word must leave
the first note as it was, while a typo fix, added words or reordering
still merge into it.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from memory_app.models import MemoryDocument

pytestmark = pytest.mark.django_db


def _note(content: str, path: str) -> dict:
    return {"store": "conversation", "path": path, "title": "Team notes", "content": content}


def _write_both(tools, first: str, second: str) -> tuple[dict, dict]:
    """The answers to writing `first` at one path and `second` at another."""
    original = tools.ok("memory_remember", _note(first, "notes/first"), status=201)
    again = tools.ok("memory_remember", _note(second, "notes/second"), status=None)
    return original, again


CHANGED_VALUES = {
    "figure": (
        "Set the HTTP client timeout for payments to 30 seconds.",
        "Set the HTTP client timeout for payments to 5 seconds.",
    ),
    "figure at the end": (
        "The database connection pool size for orders-svc is 20.",
        "The database connection pool size for orders-svc is 50.",
    ),
    "version": (
        "The reporting service runs on Postgres 15 in production.",
        "The reporting service runs on Postgres 16 in production.",
    ),
    "negation added": (
        "Do run database migrations before deploying the api.",
        "Do not run database migrations before deploying the api.",
    ),
    "negation replaced": (
        "Never restart the billing workers during the nightly batch.",
        "Always restart the billing workers during the nightly batch.",
    ),
    "word": (
        "The feature flag new-checkout is enabled for all EU users.",
        "The feature flag new-checkout is disabled for all EU users.",
    ),
    "short word": (
        "The search cluster for all customers runs in region eu-west-1 on AWS.",
        "The search cluster for all customers runs in region us-east-1 on AWS.",
    ),
    "language": (
        "Write all customer support replies for the Berlin account in German please.",
        "Write all customer support replies for the Berlin account in French please.",
    ),
}


@pytest.mark.parametrize("first,second", CHANGED_VALUES.values(), ids=CHANGED_VALUES.keys())
def test_a_changed_value_in_a_sentence_is_a_new_memory(tools, first, second):
    original, again = _write_both(tools, first, second)
    assert again["outcome"] == "created"
    assert again["id"] != original["id"]
    assert tools.ok("memory_read", {"id": original["id"]})["content"] == first
    assert tools.ok("memory_read", {"id": again["id"]})["content"] == second


SAME_CLAIMS = {
    "typo fixed": (
        "Agents recieve the nightly billing report from the finance team by email.",
        "Agents receive the nightly billing report from the finance team by email.",
    ),
    "words added": (
        "The ingress pods crash-loop after a config reload; rolling back the configmap fixed it.",
        "The ingress pods crash-loop after a config reload; rolling back the configmap "
        "fixed it quickly.",
    ),
    "reordered": (
        "The ingress pods crash-loop after a config reload; rolling back the configmap fixed it.",
        "After a config reload the ingress pods crash-loop: rolling back the configmap fixed it.",
    ),
    "letters swapped in a short word": (
        "Use teh staging cluster for load tests",
        "Use the staging cluster for load tests",
    ),
    "typo fixed and a clause added": (
        "Connect to teh primary database via pgbouncer on port 6432 from every app server",
        "Connect to the primary database via pgbouncer on port 6432 from every app server "
        "and worker",
    ),
    "another form of a word": (
        "The service use Redis for caching sessions",
        "The service uses Redis for caching sessions",
    ),
    "grammar words": (
        "The dispatcher retries failed webhooks three times before giving up",
        "The dispatcher retries failed webhooks three times before it gives up",
    ),
    "thousands separator": (
        "The public API rate limit is 1000 requests per minute",
        "The public API rate limit is 1,000 requests per minute",
    ),
}


@pytest.mark.parametrize("first,second", SAME_CLAIMS.values(), ids=SAME_CLAIMS.keys())
def test_the_same_claim_reworded_still_merges(tools, first, second):
    original, again = _write_both(tools, first, second)
    assert (again["outcome"], again["id"]) == ("deduplicated", original["id"])
    assert tools.ok("memory_read", {"id": original["id"]})["content"] == second
    assert not MemoryDocument.objects.filter(path="notes/second").exists()


def test_an_expired_draft_takes_no_write(tools):
    """A write merged into an expired draft would inherit its past expiry and
    never be served; it is a new document that list, search and context show."""
    text = "The ingress pods crash-loop after a config reload; rolling back fixed it."
    original = tools.ok("memory_remember", _note(text, "notes/first"), status=201)
    MemoryDocument.objects.filter(pk=original["id"]).update(
        expires_at=timezone.now() - timedelta(minutes=1)
    )
    again = tools.ok("memory_remember", _note(text + " Again.", "notes/second"), status=201)
    assert again["outcome"] == "created"
    assert again["id"] != original["id"]
    listed = tools.ok("memory_list", {"store": "conversation"})["documents"]
    assert [d["id"] for d in listed] == [again["id"]]
    found = tools.ok("memory_search", {"query": "ingress pods crash-loop config reload"})
    assert again["id"] in {r["id"] for r in found["results"]}
    context = tools.ok("memory_context", {"message": "ingress pods crash-loop after reload"})
    assert again["id"] in {d["id"] for d in context["documents"]}
