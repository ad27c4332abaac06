"""Request id, one access log line and the request metrics for every HTTP request;
expected refusals answered and logged without a traceback."""

import logging
import time

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.core.handlers.exception import get_exception_response
from django.http import Http404
from django.urls import get_resolver, get_urlconf
from django.utils.log import log_response

from memory_app.api.catalog import ALL_TOOL_VIEWS
from memory_app.observability.context import request_id_from, request_id_var
from memory_app.observability.metrics import http_request_observe, tool_call_observe

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
        request.request_id = request_id
        token = request_id_var.set(request_id)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
        finally:
            request_id_var.reset(token)
        elapsed = time.perf_counter() - started
        route = _route(request)
        response["X-Request-ID"] = request_id
        http_request_observe(route, request.method, response.status_code, elapsed)
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


class RefusalMiddleware:
    """Answers a view's PermissionDenied or Http404 and logs it in one line.

    Django logs a PermissionDenied with its traceback, as if something had
    broken; a refusal is the app working. The answer is the same page the
    project's handlers give; the log line names the status, path and reason.
    With DEBUG on, a 404 keeps Django's technical page.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, PermissionDenied):
            status = 403
        elif isinstance(exception, Http404) and not settings.DEBUG:
            status = 404
        else:
            return None
        response = get_exception_response(request, get_resolver(get_urlconf()), status, exception)
        log_response(
            "%s (%s): %s",
            response.reason_phrase,
            str(exception) or "no reason given",
            request.path,
            response=response,
            request=request,
        )
        return response
