"""Serving /mcp beside Django in one ASGI application.

The MCP SDK's streamable HTTP app is a Starlette app with a lifespan (its
session manager); Django's ASGI handler takes only HTTP. The router below
sends the lifespan and `/mcp` to the SDK and everything else to Django. The
transport runs stateless with JSON answers: any server process can answer
any call, so several workers need no shared session store.
"""

import json
import logging
import time

import anyio
from csp.utils import build_policy
from django.conf import settings
from django.core.exceptions import RequestAborted
from django.db import close_old_connections
from mcp.server.transport_security import TransportSecuritySettings

from memory_app.errors import TooLarge
from memory_app.mcp.bridge import ToolOutcome
from memory_app.mcp.server import api_error, memory_mcp_server
from memory_app.observability.context import request_id_from, request_id_var
from memory_app.observability.metrics import http_request_observe
from memory_app.private_answers import PRIVATE
from memory_app.request_body import body_within_limit
from memory_app.services.principals import api_key_authenticate

logger = logging.getLogger("memory_app.requests")

MCP_PATH = "/mcp"
MCP_ROUTE = "mcp"  # its label in the request log and metrics, beside Django's route names
_SCHEMES = {"token", "bearer"}


def _guarding_headers() -> list[tuple[bytes, bytes]]:
    """The headers Django's middleware puts on its own answers (README,
    "Running in production"), for the answers /mcp gives outside it."""
    headers = {
        "content-security-policy": build_policy(),
        "x-frame-options": settings.X_FRAME_OPTIONS,
        "referrer-policy": settings.SECURE_REFERRER_POLICY,
        "cross-origin-opener-policy": settings.SECURE_CROSS_ORIGIN_OPENER_POLICY,
        "cache-control": PRIVATE,
    }
    if settings.SECURE_CONTENT_TYPE_NOSNIFF:
        headers["x-content-type-options"] = "nosniff"
    return [(name.encode(), value.encode()) for name, value in headers.items() if value]


def _key_valid(authorization: str) -> bool:
    parts = authorization.split()
    if len(parts) != 2 or parts[0].lower() not in _SCHEMES:
        return False
    close_old_connections()
    try:
        return api_key_authenticate(parts[1]) is not None
    finally:
        close_old_connections()


async def _refuse(send) -> None:
    await _answer(
        send,
        401,
        {"error": "not_authenticated", "detail": "Send 'Authorization: Token <key>'."},
        (b"www-authenticate", b'Token realm="api"'),
    )


async def _post_only(send) -> None:
    """A GET asks for a stream of messages the server starts; a stateless
    server starts none, and the SDK held such a request open with nothing to
    send until the client gave up. The protocol lets a server without that
    stream answer 405 instead."""
    await _answer(
        send,
        405,
        {"error": "method_not_allowed", "detail": "This endpoint answers POST only."},
        (b"allow", b"POST"),
    )


async def _too_large(send, error: TooLarge) -> None:
    """A body over the limit, answered before the protocol reads it.

    No tool result can be made without the message's id, so the answer is a
    JSON-RPC error with a null id, which the SDK's client reads at any HTTP
    status and gives to the request it sent; its data is the tool result's
    error (API.md, 413 too_large)."""
    outcome = ToolOutcome(error.status, {"error": error.code, "detail": error.detail})
    message = {
        "jsonrpc": "2.0",
        "id": None,
        "error": api_error(outcome).model_dump(mode="json", exclude_none=True),
    }
    await _answer(send, error.status, message)


async def _answer(send, status: int, content: dict, *headers: tuple[bytes, bytes]) -> None:
    body = json.dumps(content).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                *headers,
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _declared_length(headers: dict[str, str]) -> int | None:
    try:
        return int(headers["content-length"])
    except (KeyError, ValueError):
        return None


def _replaying(body: bytes, receive):
    """The protocol's `receive`: the body already read, then what the client
    sends next (its disconnect)."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay():
        return pending.pop() if pending else await receive()

    return replay


def _observe(scope, request_id: str, code: int, started: float) -> None:
    """The request log line and the HTTP metrics of one /mcp request, which
    Django's middleware never sees (0: no answer was sent)."""
    elapsed = time.perf_counter() - started
    http_request_observe(MCP_ROUTE, scope["method"], code, elapsed)
    logger.info(
        "%s mcp %s",
        scope["method"],
        code,
        extra={
            "request_id": request_id,
            "method": scope["method"],
            "path": scope.get("path", ""),
            "route": MCP_ROUTE,
            "status": code,
            "duration_ms": round(elapsed * 1000, 1),
        },
    )


def with_mcp(django_app):
    """Django's ASGI app with the MCP endpoint at /mcp.

    Every MCP HTTP request must carry a valid API key (401 in the API's error
    shape otherwise), and a body within MEMORY_MAX_BODY_BYTES (too_large),
    before the protocol sees it. DNS-rebinding protection is off because the
    endpoint trusts only that header, never cookies.

    The SDK has a body limit of its own (4 MiB by default), whose plain-text
    413 its client cannot read: it is set to the same limit, so that a body
    within the operator's setting always reaches the protocol and one over
    it is always answered here.
    """
    mcp_app = memory_mcp_server().streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        max_request_body_size=settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )

    guarding = _guarding_headers()

    async def mcp_request(scope, receive, send):
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        request_id = request_id_from(headers.get("x-request-id"))
        token = request_id_var.set(request_id)
        started = time.perf_counter()
        status: list[int] = []
        observed = False

        def observe() -> None:
            """Once per request: as its last byte goes out, so the count and
            the log line exist before the client can act on the answer, or
            at the end when nothing (more) was sent."""
            nonlocal observed
            if not observed:
                observed = True
                _observe(scope, request_id, status[0] if status else 0, started)

        async def post() -> None:
            try:
                body = await body_within_limit(receive, _declared_length(headers))
            except RequestAborted:
                return
            except TooLarge as error:
                await _too_large(answer, error)
                return
            # The tool call reads its request id from the headers it is given.
            forwarded = [(k, v) for k, v in scope["headers"] if k.lower() != b"x-request-id"]
            forwarded.append((b"x-request-id", request_id.encode()))
            await mcp_app({**scope, "headers": forwarded}, _replaying(body, receive), answer)

        async def answer(message):
            if message["type"] == "http.response.start":
                status.append(message["status"])
                extra = [*guarding, (b"x-request-id", request_id.encode())]
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                observe()
            await send(message)

        try:
            if not await anyio.to_thread.run_sync(_key_valid, headers.get("authorization", "")):
                await _refuse(answer)
            elif scope["method"] == "GET":
                await _post_only(answer)
            else:
                await post()
        finally:
            request_id_var.reset(token)
            observe()

    async def application(scope, receive, send):
        if scope["type"] == "lifespan":
            await mcp_app(scope, receive, send)
            return
        path = scope.get("path", "")
        if scope["type"] == "http" and (path == MCP_PATH or path.startswith(MCP_PATH + "/")):
            await mcp_request(scope, receive, send)
            return
        await django_app(scope, receive, send)

    return application
