"""Running an agent tool for a caller that is not a Django request (the MCP server).

The tool's own DRF view is called in-process with the caller's Authorization
and runtime headers, behind the same input check as every `/api/` request
(ApiInputMiddleware: runtime headers too long or holding control characters),
so validation, authentication, throttles, on-behalf-of, policy, scanner, caps
and the error mapping are exactly those of `POST /api/v1/tools/<name>`,
including for tools added to the manifest later.
"""

import io
import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from django.core.handlers.wsgi import WSGIRequest
from django.db import close_old_connections
from django.urls import reverse

from memory_app.api.catalog import ALL_TOOL_VIEWS
from memory_app.api.validation import ApiInputMiddleware
from memory_app.errors import named
from memory_app.observability.context import request_id_from, request_id_var
from memory_app.observability.metrics import tool_call_observe

logger = logging.getLogger("memory_app.requests")

# Only these reach the view: cookies never do, so no browser session rides along.
FORWARDED_HEADERS = (
    "authorization",
    "x-memory-conversation",
    "x-memory-run",
    "x-memory-on-behalf-of",
    "x-request-id",
)


@dataclass(frozen=True)
class ToolOutcome:
    status: int
    data: dict
    retry_after: str | None = None

    @property
    def is_error(self) -> bool:
        return self.status >= 400


@cache
def _views() -> dict[str, object]:
    return {view.name: ApiInputMiddleware(view.as_view()) for view in ALL_TOOL_VIEWS}


def _answer(response) -> dict:
    """The view's data, or the JSON of the input check's refusal."""
    data = getattr(response, "data", None)
    return data if data is not None else json.loads(response.content)


def _request(name: str, arguments: Mapping, headers: Mapping[str, str], client: str) -> WSGIRequest:
    # UTF-8 as a REST client sends it, not ASCII escapes (six bytes for a
    # character UTF-8 holds in three), and without spaces between items: the
    # body limit must count the same bytes over MCP as over REST, and never
    # more than the message held within it. The protocol's parser refuses
    # lone surrogates, so every string here has a UTF-8 form.
    body = json.dumps(arguments, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": reverse(f"api:{name}"),
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        "SERVER_NAME": "mcp",
        "SERVER_PORT": "443",
        "HTTP_HOST": headers.get("host", "localhost"),
        "REMOTE_ADDR": client,
        "wsgi.url_scheme": "https",
        "wsgi.input": io.BytesIO(body),
    }
    for header in FORWARDED_HEADERS:
        value = headers.get(header)
        if value is not None:
            environ["HTTP_" + header.upper().replace("-", "_")] = value
    return WSGIRequest(environ)


def tool_call(
    name: str, arguments: Mapping, headers: Mapping[str, str], client: str = ""
) -> ToolOutcome:
    """Run one tool as the REST endpoint would, with the caller's headers.

    Blocking (database work): the MCP server calls it from a worker thread.
    """
    view = _views().get(name)
    if view is None:
        return ToolOutcome(404, {"error": "not_found", "detail": f"No tool named {named(name)}."})
    request_id = request_id_from(headers.get("x-request-id"))
    token = request_id_var.set(request_id)
    started = time.perf_counter()
    close_old_connections()
    try:
        request = _request(name, arguments, headers, client)
        response = view(request)
    finally:
        close_old_connections()
        request_id_var.reset(token)
    elapsed = time.perf_counter() - started
    outcome = ToolOutcome(response.status_code, _answer(response), response.get("Retry-After"))
    tool_call_observe(name, "mcp", outcome.status, outcome.data, elapsed)
    user = getattr(request, "user", None)
    logger.info(
        "MCP %s %s",
        name,
        outcome.status,
        extra={
            "request_id": request_id,
            "principal": user.get_username() if user is not None else "",
            "route": "mcp",
            "tool": name,
            "status": outcome.status,
            "duration_ms": round(elapsed * 1000, 1),
        },
    )
    return outcome
