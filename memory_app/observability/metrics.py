"""Prometheus metrics.

Counters and histograms are updated in the process that serves the call;
what lives in the database (review queue, dream jobs) is read at scrape time
by `DatabaseCollector`, so the worker process needs no metrics endpoint of its
own. Under several server processes set PROMETHEUS_MULTIPROC_DIR
(prometheus-client's multiprocess mode) and every process's counters add up.
"""

import os

from django.db import DatabaseError
from django.db.models import Count
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import REGISTRY, GaugeMetricFamily

from memory_app.models import DreamJob, DreamReviewItem, ReviewStatus
from memory_app.observability.broker import broker_queue_size

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

http_requests = Counter(
    "memory_http_requests_total",
    "HTTP requests answered, by route name, method and status code.",
    ["route", "method", "status"],
)
http_latency = Histogram(
    "memory_http_request_seconds",
    "Time to answer an HTTP request (to the first byte for streams), by route name.",
    ["route"],
    buckets=LATENCY_BUCKETS,
)
tool_calls = Counter(
    "memory_tool_calls_total",
    "Agent tool calls, by tool, transport (rest or mcp) and status code.",
    ["tool", "transport", "status"],
)
tool_latency = Histogram(
    "memory_tool_seconds",
    "Agent tool call latency inside the server, by tool and transport.",
    ["tool", "transport"],
    buckets=LATENCY_BUCKETS,
)
scanner_blocks = Counter(
    "memory_scanner_blocks_total",
    "Findings of writes the safety scanner refused, by detector.",
    ["detector"],
)
injected_documents = Counter(
    "memory_injected_documents_total",
    "Documents handed to agents by memory_context.",
)
injected_hits = Counter(
    "memory_injected_hits_total",
    "Documents agents reported as used with memory_mark_used (hit rate: this over injected).",
)


# A client may send any token as its method; the label keeps to these.
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def http_request_observe(route: str, method: str, status: int, seconds: float) -> None:
    """Record one answered HTTP request, whichever app answered it (Django,
    or the MCP endpoint beside it)."""
    http_requests.labels(route, method if method in _METHODS else "other", str(status)).inc()
    http_latency.labels(route).observe(seconds)


def tool_call_observe(tool: str, transport: str, status: int, data, seconds: float) -> None:
    """Record one tool call from its answer (never its arguments or content)."""
    tool_calls.labels(tool, transport, str(status)).inc()
    tool_latency.labels(tool, transport).observe(seconds)
    if not isinstance(data, dict):
        return
    if data.get("error") == "write_blocked":
        for finding in data.get("findings") or ():
            scanner_blocks.labels(str(finding.get("detector", "unknown"))).inc()
    elif status == 200 and tool == "memory_context":
        injected_documents.inc(len(data.get("documents") or ()))
    elif status == 200 and tool == "memory_mark_used":
        injected_hits.inc(int(data.get("updated") or 0))


class DatabaseCollector:
    """Gauges read from the database when Prometheus scrapes."""

    def collect(self):
        try:
            yield from self._from_database()
        except DatabaseError:
            # The process counters still get scraped; /readyz reports the database.
            return
        yield from self._from_broker()

    def _from_database(self):
        review = GaugeMetricFamily(
            "memory_review_queue_size", "Review items waiting for a human decision."
        )
        review.add_metric([], DreamReviewItem.objects.filter(status=ReviewStatus.PENDING).count())
        yield review
        jobs = GaugeMetricFamily(
            "memory_dream_jobs",
            "Dream jobs on record, by kind and status (failed = failures, all = runs).",
            labels=["kind", "status"],
        )
        for row in DreamJob.objects.values("kind", "status").annotate(n=Count("id")):
            jobs.add_metric([row["kind"], row["status"]], row["n"])
        yield jobs

    def _from_broker(self):
        queued = broker_queue_size()
        if queued is not None:
            broker = GaugeMetricFamily(
                "memory_task_queue_size", "Celery tasks waiting in the broker's default queue."
            )
            broker.add_metric([], queued)
            yield broker


def metrics_payload() -> tuple[bytes, str]:
    """The exposition text for this process, or for all of them in multiprocess mode."""
    registry = CollectorRegistry()
    registry.register(DatabaseCollector())
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY) + generate_latest(registry), CONTENT_TYPE_LATEST
