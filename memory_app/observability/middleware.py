"""Request id, one access log line and the request metrics for every HTTP request."""

import logging
import time

from memory_app.api.catalog import ALL_TOOL_VIEWS
from memory_app.observability.context import request_id_from, request_id_var
from memory_app.observability.metrics import http_latency, http_requests, tool_call_observe

logger = logging.getLogger("memory_app.requests")

_TOOLS = frozenset(view.name for view in ALL_TOOL_VIEWS)


def _route(request) -> str:
    match = getattr(request, "resolver_match", None)
    if match is None:
        return "unmatched"
    return match.view_name


def _principal(request) -> str:
    user = getattr(request, "user", None)
    return user.get_username() if user is not None and user.is_authenticated else ""


class RequestObservationMiddleware:
    """Sets X-Request-ID, logs method/route/status/principal (never bodies or
    query strings) and counts the request; tool calls also feed the tool metrics."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request_id = request_id_from(request.headers.get("X-Request-ID"))
        token = request_id_var.set(request_id)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
        finally:
            request_id_var.reset(token)
        elapsed = time.perf_counter() - started
        route = _route(request)
        response["X-Request-ID"] = request_id
        http_requests.labels(route, request.method, str(response.status_code)).inc()
        http_latency.labels(route).observe(elapsed)
        tool = route.removeprefix("api:")
        if tool in _TOOLS and request.method == "POST":
            tool_call_observe(
                tool, "rest", response.status_code, getattr(response, "data", None), elapsed
            )
        logger.info(
            "%s %s %s",
            request.method,
            route,
            response.status_code,
            extra={
                "request_id": request_id,
                "principal": _principal(request),
                "method": request.method,
                "path": request.path,
                "route": route,
                "status": response.status_code,
                "duration_ms": round(elapsed * 1000, 1),
            },
        )
        return response
