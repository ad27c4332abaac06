"""Request rates per API key, one budget for reads and one for writes.

These bound how hard one key can drive the service (a runaway loop, a
leaked key); the write quotas of policy.py bound what a service account
may change. A throttled request answers 429 `rate_limited` with
`Retry-After` (api/errors.py). Rates come from the settings on every
request, so an operator's change (or a test's) applies without a restart.

The counters live in the cache (Redis with MEMORY_CACHE_URL). When it
cannot be reached the request goes through uncounted and a warning is
logged: a bound on runaway callers is not worth refusing every agent's
reads and writes while the cache is down; /readyz reports it.
"""

import logging

import redis
from django.conf import settings
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle


def is_write(request: Request, view) -> bool:
    """Tools say whether they write; other endpoints by their HTTP method."""
    return getattr(view, "write", request.method not in SAFE_METHODS)


logger = logging.getLogger(__name__)


class KeyRateThrottle(SimpleRateThrottle):
    """Counts per API key; a session per user; no credentials per address."""

    setting: str
    counts_writes: bool

    def allow_request(self, request: Request, view) -> bool:
        try:
            return super().allow_request(request, view)
        except redis.RedisError as error:
            logger.warning(
                "The cache holding the API rate counters is unreachable; %s not counted.",
                self.scope,
                extra={"error": type(error).__name__},
            )
            return True

    def get_rate(self) -> str:
        return getattr(settings, self.setting)

    def get_cache_key(self, request: Request, view) -> str | None:
        if is_write(request, view) != self.counts_writes:
            return None
        if request.auth is not None and hasattr(request.auth, "pk"):
            ident = f"key-{request.auth.pk}"
        elif request.user.is_authenticated:
            ident = f"user-{request.user.pk}"
        else:
            ident = f"addr-{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}


class ReadThrottle(KeyRateThrottle):
    scope = "api-read"
    setting = "MEMORY_API_READ_RATE"
    counts_writes = False


class WriteThrottle(KeyRateThrottle):
    scope = "api-write"
    setting = "MEMORY_API_WRITE_RATE"
    counts_writes = True
