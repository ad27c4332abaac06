"""`/metrics` for Prometheus and `/readyz` for orchestrators."""

import hmac

import redis
from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, connection
from django.http import HttpResponse, JsonResponse
from django.views.decorators.http import require_safe

from memory_app.observability.broker import broker_configured, broker_reachable
from memory_app.observability.metrics import metrics_payload


@require_safe
def metrics(request):
    """The exposition text; behind `Authorization: Bearer <MEMORY_METRICS_TOKEN>` when set."""
    expected = settings.MEMORY_METRICS_TOKEN
    if expected:
        sent = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(sent.encode(), expected.encode()):
            return JsonResponse(
                {"error": "not_authenticated", "detail": "Send the metrics token."}, status=401
            )
    body, content_type = metrics_payload()
    return HttpResponse(body, content_type=content_type)


def _database_up() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError:
        return False
    return True


def _cache_up() -> bool:
    try:
        cache.get("readyz")
    except redis.RedisError:
        return False
    return True


@require_safe
def readyz(request):
    """200 when the database answers and, if an operator configured one, the broker too.

    `/healthz` stays database-only so a broker outage does not restart web
    processes that can still serve reads. A configured cache is reported
    but does not make the process unready: without it the API's rate
    counters are skipped and everything else is served (api/throttling.py).
    """
    checks = {"database": "up" if _database_up() else "down"}
    if broker_configured():
        checks["broker"] = "up" if broker_reachable() else "down"
    ready = all(state == "up" for state in checks.values())
    if settings.MEMORY_CACHE_URL:
        checks["cache"] = "up" if _cache_up() else "down"
    return JsonResponse(
        {"status": "ok" if ready else "unavailable", **checks}, status=200 if ready else 503
    )
