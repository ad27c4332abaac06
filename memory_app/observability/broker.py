"""The configured Celery broker, as readiness and metrics see it."""

import redis
from django.conf import settings

from config.celery import app as celery_app

TIMEOUT_SECONDS = 2.0


def broker_configured() -> bool:
    """True when an operator set CELERY_BROKER_URL (not the zero-setup folder transport)."""
    return not settings.CELERY_BROKER_URL.startswith("filesystem://")


def broker_reachable() -> bool:
    try:
        with celery_app.connection_for_write(settings.CELERY_BROKER_URL) as connection:
            connection.ensure_connection(max_retries=1, timeout=TIMEOUT_SECONDS)
    except Exception:
        return False
    return True


def broker_queue_size() -> int | None:
    """Messages waiting in the default queue of a Redis broker; None for other brokers."""
    url = settings.CELERY_BROKER_URL
    if not url.startswith(("redis://", "rediss://")):
        return None
    try:
        client = redis.Redis.from_url(url, socket_timeout=TIMEOUT_SECONDS)
        return int(client.llen(celery_app.conf.task_default_queue))
    except redis.RedisError:
        return None
