"""Per-run write caps and per-minute rates for service accounts."""

import pytest

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


def test_people_are_not_capped(caller_for, owner, settings):
    settings.MEMORY_RUN_WRITE_CAP = 1
    tools = caller_for(owner)
    assert [_write(tools, n).status_code for n in range(3)] == [201, 201, 201]
