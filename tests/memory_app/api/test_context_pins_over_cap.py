"""A pin beyond MEMORY_ALWAYS_INJECT_CAP loses its guaranteed place, not its
chance to be retrieved (DESIGN §4: pinned documents "come first, capped per
turn")."""

import pytest

from memory_app.models import ContextTrace
from tests.memory_app.api.conftest import remember_body

pytestmark = pytest.mark.django_db

TOPICS = [
    "Grafana dashboards load slowly when the time range spans a quarter.",
    "The billing export job retries three times before paging the on-call.",
    "Terraform plans for the network module need the VPN to reach the state bucket.",
    "Certificate renewals for the public load balancer run on the first Monday.",
    "The staging database is refreshed from a masked snapshot every night.",
    "Zookeeper quorum loss on the ledger cluster: restart the followers one at a "
    "time and never the leader first.",
]
MESSAGE = "the ledger cluster lost zookeeper quorum, how do I restart it safely?"


@pytest.fixture
def pins(tools):
    """Six pinned drafts p0..p5 of the agent's conversation; p5 answers MESSAGE."""
    return [
        tools.ok(
            "memory_remember",
            remember_body(
                path=f"p{n}",
                title=f"Note {n}",
                content=content,
                doc_type="note",
                tags=[],
                entities={},
                always_inject=True,
            ),
            status=201,
        )["id"]
        for n, content in enumerate(TOPICS)
    ]


def test_a_pin_over_the_cap_is_still_injected_when_it_is_the_best_hit(tools, settings, pins):
    assert settings.MEMORY_ALWAYS_INJECT_CAP == 5
    best = pins[5]
    assert tools.ok("memory_search", {"query": MESSAGE})["results"][0]["id"] == best

    body = tools.ok("memory_context", {"message": MESSAGE})

    documents = {d["id"]: d for d in body["documents"]}
    always = [d for d in body["documents"] if d["block"] == "always"]
    assert len(always) == 5
    assert best not in {d["id"] for d in always}
    assert documents[best]["block"] == "untrusted"
    untrusted = body["context"][body["context"].index("<untrusted_memory_candidates>") :]
    entry = untrusted[untrusted.index(f'id="{best}"') :].split("</memory>")[0]
    assert 'pinned="true"' not in entry
    assert "Zookeeper quorum loss" in entry


def test_a_pin_is_injected_and_traced_once(tools, pins):
    body = tools.ok("memory_context", {"message": MESSAGE})

    ids = [d["id"] for d in body["documents"]]
    assert len(ids) == len(set(ids))
    trace = ContextTrace.objects.get(pk=body["trace_id"]).candidates
    traced = [row["id"] for row in trace]
    assert len(traced) == len(set(traced))
    row = next(row for row in trace if row["id"] == pins[5])
    assert (row["block"], row["outcome"]) == ("untrusted", "injected")
    assert row["sources"]
