"""Per-key request rates on the API: reads and writes have separate budgets."""

import pytest
from rest_framework.test import APIClient

from memory_app.services.principals import api_key_issue
from tests.memory_app.api.conftest import remember_body

pytestmark = pytest.mark.django_db


def test_reads_past_the_rate_get_429_with_retry_after(tools, settings):
    settings.MEMORY_API_READ_RATE = "3/minute"
    statuses = [tools("memory_search", {"query": "nginx"}).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    refused = tools("memory_list", {"store": "conversation"})
    assert refused.status_code == 429
    assert refused.json()["error"] == "rate_limited"
    assert 1 <= int(refused["Retry-After"]) <= 61


def test_get_endpoints_count_as_reads(agent, settings):
    settings.MEMORY_API_READ_RATE = "2/minute"
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key_issue(user=agent).raw}")
    statuses = [client.get("/api/v1/events").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]


def test_writes_have_their_own_budget(tools, settings):
    settings.MEMORY_API_WRITE_RATE = "2/minute"
    settings.MEMORY_API_READ_RATE = "100/minute"
    for n in range(2):
        tools.ok("memory_remember", remember_body(path=f"t/{n}", content=f"fact {n}"), 201)
    refused = tools("memory_remember", remember_body(path="t/2", content="fact 2"))
    assert refused.status_code == 429
    assert "Retry-After" in refused
    assert tools("memory_search", {"query": "fact"}).status_code == 200


def test_each_key_counts_on_its_own(caller_for, agent, settings):
    settings.MEMORY_API_READ_RATE = "1/minute"
    first, second = caller_for(agent), caller_for(agent)
    assert first("memory_search", {"query": "x"}).status_code == 200
    assert first("memory_search", {"query": "x"}).status_code == 429
    assert second("memory_search", {"query": "x"}).status_code == 200


def test_anonymous_requests_are_throttled_by_address(settings):
    settings.MEMORY_API_READ_RATE = "2/minute"
    statuses = [APIClient().get("/api/v1/docs").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    other = APIClient().get("/api/v1/docs", REMOTE_ADDR="10.1.2.3")
    assert other.status_code == 200
