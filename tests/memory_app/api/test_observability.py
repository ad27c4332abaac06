"""Metrics, JSON logs with the request id, and the readiness check."""

import json
import logging

import pytest
from prometheus_client.parser import text_string_to_metric_families

from memory_app.models import DreamJob
from memory_app.observability.logs import JsonFormatter, RequestIdFilter
from tests.memory_app.api.conftest import remember_body

pytestmark = pytest.mark.django_db

SECRET = "ghp_" + "Zq8rT2mK9vXw4LpA7sBn3cDe6fGh1jKl5mNo"


def samples(client) -> dict:
    response = client.get("/metrics")
    assert response.status_code == 200
    found = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def value(found: dict, name: str, **labels) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


def test_metrics_count_requests_tools_blocks_and_hits(client, tools):
    before = samples(client)
    created = tools.ok("memory_remember", remember_body(), status=201)
    tools.ok("memory_context", {"message": "nginx ingress crash after reload"})
    tools.ok("memory_mark_used", {"ids": [created["id"]]})
    blocked = tools("memory_remember", remember_body(content=f"token {SECRET}"))
    assert blocked.status_code == 422
    DreamJob.objects.create(kind="compact", status="failed")
    after = samples(client)

    def grew(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    tool = {"tool": "memory_remember", "transport": "rest"}
    assert grew("memory_tool_calls_total", status="201", **tool) == 1
    assert grew("memory_tool_calls_total", status="422", **tool) == 1
    assert grew("memory_tool_seconds_count", **tool) == 2
    assert (
        grew("memory_http_requests_total", route="api:memory_context", method="POST", status="200")
        == 1
    )
    assert grew("memory_scanner_blocks_total", detector="github_token") == 1
    assert grew("memory_injected_documents_total") >= 1
    assert grew("memory_injected_hits_total") == 1
    assert value(after, "memory_dream_jobs", kind="compact", status="failed") == 1
    assert value(after, "memory_review_queue_size") == 0
    assert SECRET not in client.get("/metrics").content.decode()


def test_every_tool_of_the_manifest_is_counted_as_a_tool_call(client, tools):
    before = samples(client)
    tools.ok("memory_capture", {"transcript": "Root cause: the DNS cache was stale."})
    after = samples(client)
    labels = {"tool": "memory_capture", "transport": "rest", "status": "200"}
    assert (
        value(after, "memory_tool_calls_total", **labels)
        - value(before, "memory_tool_calls_total", **labels)
        == 1
    )


def test_metrics_need_the_token_when_one_is_set(client, settings):
    settings.MEMORY_METRICS_TOKEN = "scrape-me"
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-me").status_code == 200


def test_every_response_carries_a_request_id_and_keeps_a_sane_one(client):
    assert len(client.get("/healthz")["X-Request-ID"]) == 32
    assert client.get("/healthz", HTTP_X_REQUEST_ID="abc-123")["X-Request-ID"] == "abc-123"
    assert client.get("/healthz", HTTP_X_REQUEST_ID="bad id\n")["X-Request-ID"] != "bad id\n"


def test_the_request_log_is_one_json_object_with_id_and_principal_and_no_content(tools, caplog):
    with caplog.at_level(logging.INFO, logger="memory_app.requests"):
        response = tools("memory_remember", remember_body(content=f"token {SECRET}"))
    record = next(r for r in caplog.records if r.name == "memory_app.requests")
    RequestIdFilter().filter(record)
    line = JsonFormatter().format(record)
    assert "\n" not in line
    entry = json.loads(line)
    assert entry["request_id"] == response["X-Request-ID"]
    assert entry["principal"] == "agent"
    assert entry["route"] == "api:memory_remember" and entry["status"] == 422
    assert SECRET not in line and "Nginx" not in line and "Token" not in line


def test_djangos_own_line_about_a_refused_request_carries_its_id(client, caplog):
    with caplog.at_level(logging.WARNING, logger="django.request"):
        response = client.get("/api/v1/no-such-endpoint")
    record = next(r for r in caplog.records if r.name == "django.request")
    RequestIdFilter().filter(record)
    assert json.loads(JsonFormatter().format(record))["request_id"] == response["X-Request-ID"]


def test_a_token_sent_in_the_address_stays_out_of_every_log_line(tools, caplog):
    with caplog.at_level(logging.INFO):
        response = tools(f"{SECRET}")
    assert response.status_code == 404
    lines = []
    for record in caplog.records:
        RequestIdFilter().filter(record)
        lines.append(JsonFormatter().format(record))
    entries = [json.loads(line) for line in lines]
    assert "Not Found: /api/v1/tools/…" in [entry["message"] for entry in entries]
    assert "/api/v1/tools/…" in [entry.get("path") for entry in entries]
    assert not any(SECRET in line for line in lines)


def test_django_lines_are_printed_once(settings):
    assert logging.getLogger("django").handlers == []


def test_readiness_covers_the_database_without_a_configured_broker(client):
    assert client.get("/readyz").json() == {"status": "ok", "database": "up"}


def test_readiness_checks_a_configured_broker(client, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:6379/13"
    assert client.get("/readyz").json() == {"status": "ok", "database": "up", "broker": "up"}
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/13"
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["broker"] == "down"


def test_metrics_still_answer_when_the_database_does_not(client, monkeypatch):
    from django.db import DatabaseError

    from memory_app.observability import metrics

    def down(self):
        raise DatabaseError("connection refused")
        yield

    monkeypatch.setattr(metrics.DatabaseCollector, "_from_database", down)
    response = client.get("/metrics")
    assert response.status_code == 200
    assert b"memory_http_requests_total" in response.content
    assert b"memory_review_queue_size" not in response.content


@pytest.fixture
def cache_down(settings):
    """A configured Redis cache that nothing answers on."""
    settings.MEMORY_CACHE_URL = "redis://127.0.0.1:1/0"
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": settings.MEMORY_CACHE_URL,
        }
    }


def test_readiness_reports_a_configured_cache(client, settings):
    settings.MEMORY_CACHE_URL = "redis://127.0.0.1:6379/13"
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": settings.MEMORY_CACHE_URL,
        }
    }
    assert client.get("/readyz").json() == {"status": "ok", "database": "up", "cache": "up"}


def test_with_the_cache_down_the_api_still_writes_and_readiness_says_so(
    client, tools, cache_down, caplog
):
    body = tools.ok("memory_remember", remember_body(path="while/cache/down"), status=201)
    assert tools.ok("memory_read", {"id": body["id"]})["path"] == "while/cache/down"
    assert "rate counters is unreachable" in caplog.text
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "up", "cache": "down"}
