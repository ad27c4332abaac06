"""Per-run write caps and per-minute rates for service accounts."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.memory_app.api.capture_transcripts import INCIDENT_WITHOUT_LEARNINGS
from tests.memory_app.api.conftest import remember_body

pytestmark = pytest.mark.django_db


def _write(tools, n):
    return tools("memory_remember", remember_body(path=f"q/{n}", content=f"distinct fact {n}"))


def test_a_service_account_stops_at_the_run_cap(tools, settings):
    settings.MEMORY_RUN_WRITE_CAP = 3
    assert [_write(tools, n).status_code for n in range(3)] == [201, 201, 201]
    refused = _write(tools, 3)
    assert refused.status_code == 429
    assert refused.json()["error"] == "rate_limited"
    assert int(refused["Retry-After"]) > 0


def test_a_run_named_in_a_capture_body_does_not_reset_the_cap(tools, settings):
    settings.MEMORY_RUN_WRITE_CAP = 2
    assert [_write(tools, n).status_code for n in range(2)] == [201, 201]
    body = tools.ok(
        "memory_capture",
        {"transcript": INCIDENT_WITHOUT_LEARNINGS, "run_id": "a-run-the-model-made-up"},
    )
    assert body["kept"] == []
    assert {skip["reason"] for skip in body["skipped"]} == {"write_cap_reached"}


def test_a_run_in_a_capture_body_does_not_stand_for_the_runtimes(caller_for, agent):
    response = caller_for(agent, run=None)(
        "memory_capture", {"transcript": INCIDENT_WITHOUT_LEARNINGS, "run_id": "run-9"}
    )
    assert response.status_code == 400
    assert "X-Memory-Run" in response.json()["fields"]


def test_a_new_run_may_write_again(tools, settings):
    settings.MEMORY_RUN_WRITE_CAP = 1
    assert _write(tools, 0).status_code == 201
    assert _write(tools, 1).status_code == 429
    assert _write(tools.with_headers(**{"X-Memory-Run": "run-2"}), 1).status_code == 201


def test_the_per_minute_rate_applies_across_runs(tools, settings):
    settings.MEMORY_RATE_LIMIT_PER_MINUTE = 2
    assert _write(tools, 0).status_code == 201
    assert _write(tools.with_headers(**{"X-Memory-Run": "b"}), 1).status_code == 201
    refused = _write(tools.with_headers(**{"X-Memory-Run": "c"}), 2)
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 61


def test_a_runs_writes_are_counted_without_reading_the_agents_other_runs(tools):
    """Statistics taken before an agent's first write put its rows at one;
    the run's count must still read the run's rows only, not every write
    the agent made in other runs (the quota ran slower with each write)."""
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_app_memoryversion")
    for n in range(12):
        assert _write(tools.with_headers(**{"X-Memory-Run": f"earlier-{n}"}), n).status_code == 201
    with CaptureQueriesContext(connection) as queries:
        assert _write(tools.with_headers(**{"X-Memory-Run": "now"}), 99).status_code == 201
    (statement,) = [q["sql"] for q in queries.captured_queries if "run_id =" in q["sql"]]
    with connection.cursor() as cursor:
        # A table this small is read whole; priced out, only the indexes compete.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {statement}")
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    assert _rows_read_and_dropped(plan[0]["Plan"]) == 0


def _rows_read_and_dropped(node: dict) -> int:
    """Rows a plan read and then filtered out, over all its nodes."""
    dropped = node.get("Rows Removed by Filter", 0)
    return dropped + sum(_rows_read_and_dropped(child) for child in node.get("Plans", []))


def test_people_are_not_capped(caller_for, owner, settings):
    settings.MEMORY_RUN_WRITE_CAP = 1
    tools = caller_for(owner)
    assert [_write(tools, n).status_code for n in range(3)] == [201, 201, 201]


def _draft(tools, n):
    return tools.ok("memory_remember", remember_body(path=f"d/{n}", content=f"draft {n}"), 201)


def _propose(tools, draft):
    body = {"id": draft["id"], "target_store": "workspace_runbooks", "rationale": "Useful."}
    return tools("memory_propose_promotion", body)


def test_proposals_count_against_the_run_cap(tools, settings, runbooks):
    settings.MEMORY_RUN_WRITE_CAP = 4
    drafts = [_draft(tools, n) for n in range(3)]
    assert _propose(tools, drafts[0]).status_code == 202
    refused = _propose(tools, drafts[1])
    assert refused.status_code == 429
    assert refused.json()["error"] == "rate_limited"
    assert int(refused["Retry-After"]) > 0


def test_proposing_again_at_the_cap_returns_the_first_proposal(tools, settings, runbooks):
    settings.MEMORY_RUN_WRITE_CAP = 2
    draft = _draft(tools, 0)
    first = _propose(tools, draft)
    assert first.status_code == 202
    again = _propose(tools, draft)
    assert again.status_code == 200
    assert again.json()["review_item_id"] == first.json()["review_item_id"]


def test_deletion_requests_count_against_the_run_cap(tools, settings):
    settings.MEMORY_RUN_WRITE_CAP = 3
    drafts = [_draft(tools, n) for n in range(2)]
    assert tools("memory_delete", {"id": drafts[0]["id"]}).status_code == 202
    refused = tools("memory_delete", {"id": drafts[1]["id"]})
    assert refused.status_code == 429
    assert "Retry-After" in refused


def test_proposals_and_deletions_count_against_the_rate(tools, settings, runbooks):
    drafts = [_draft(tools, n) for n in range(2)]
    settings.MEMORY_RATE_LIMIT_PER_MINUTE = 3
    fresh = tools.with_headers(**{"X-Memory-Run": "another"})
    assert _propose(fresh, drafts[0]).status_code == 202
    refused = fresh("memory_delete", {"id": drafts[1]["id"]})
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 61


@pytest.mark.parametrize("tool", ["memory_remember", "memory_delete", "memory_propose_promotion"])
def test_a_service_account_must_name_its_run_to_write(caller_for, agent, tool, runbooks):
    draft = _draft(caller_for(agent), 0)
    bodies = {
        "memory_remember": remember_body(path="x/y"),
        "memory_delete": {"id": draft["id"]},
        "memory_propose_promotion": {
            "id": draft["id"],
            "target_store": "workspace_runbooks",
            "rationale": "Useful.",
        },
    }
    response = caller_for(agent, run=None)(tool, bodies[tool])
    assert response.status_code == 400
    assert "X-Memory-Run" in response.json()["fields"]


def test_reads_need_no_run(caller_for, agent):
    assert caller_for(agent, run=None)("memory_list", {"store": "conversation"}).status_code == 200
