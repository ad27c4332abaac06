"""`GET /api/v1/events/stream`: the events outbox as Server-Sent Events.

Each event's `id:` is its outbox id, so a client that reconnects with
`Last-Event-ID` (browsers' EventSource does it by itself) continues after the
last event it saw: nothing is missed and nothing repeated, across a server
restart too, because the cursor is the client's and the outbox is the
database. The events and their visibility are those of `GET /api/v1/events`
(`events_page`).

The body is an async iterator: under the ASGI server a waiting stream holds
no thread and no connection. Once per POLL_SECONDS a process reads the
outbox's newest id (one query for all its streams); a stream runs its own
visibility query only when that moved past what it has covered. A stream
ends after MAX_STREAM_SECONDS; the client reconnects with its cursor. It
also ends, before its next read, once its key is revoked, its session has
ended or its password changed, its user is deactivated, or the conversation
or acted-for user it follows is out of its reach.

Only the stream itself is `text/event-stream`: an error before it starts
(a bad cursor, no credentials) is the JSON error shape with a JSON content
type, whatever the client accepts (api/validation.py, `AnswerInJSON`).
"""

import asyncio
import json
import time
from weakref import WeakKeyDictionary

from asgiref.sync import sync_to_async
from django.contrib.auth import HASH_SESSION_KEY, get_user_model
from django.core.handlers.asgi import ASGIRequest
from django.db import close_old_connections, connection
from django.db.models import Max
from django.http import HttpResponse, StreamingHttpResponse
from django.utils.crypto import constant_time_compare
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.decorators import api_view
from rest_framework.request import Request

from memory_app.api.events import MAX_ID, PAGE, _int_param, event_json, events_page
from memory_app.errors import InvalidInput, NotFound, PermissionDenied
from memory_app.models import ApiKey, MemoryEvent

POLL_SECONDS = 1.0
KEEPALIVE_SECONDS = 15.0
MAX_STREAM_SECONDS = 300.0
RETRY_MILLISECONDS = 2000


def _frame(event: MemoryEvent) -> str:
    # No `event:` field: every message reaches EventSource's onmessage; the type is in data.
    return f"id: {event.id}\ndata: {json.dumps(event_json(event))}\n\n"


def _cursor(request: Request) -> int:
    header = request.headers.get("Last-Event-ID")
    if header is None:
        return _int_param(request, "after", 0, minimum=0, maximum=MAX_ID)
    try:
        value = int(header.strip())
    except ValueError:
        raise InvalidInput(
            "Last-Event-ID must be an event id.", fields={"Last-Event-ID": ["Not an integer."]}
        ) from None
    if not 0 <= value <= MAX_ID:
        raise InvalidInput(
            "Last-Event-ID is out of range.", fields={"Last-Event-ID": ["Out of range."]}
        )
    return value


def _credentials_hold(request: Request) -> bool:
    """Whether what opened the stream still admits it: its key unrevoked or
    its session not ended nor its password changed since (as Django's
    `get_user` checks a session's hash), and its user active. The user is
    read again, so a grant or a permission taken away applies to the events
    that follow."""
    user = get_user_model().objects.filter(pk=request.user.pk, is_active=True).first()
    if user is None:
        return False
    if isinstance(request.auth, ApiKey):
        held = ApiKey.objects.filter(pk=request.auth.pk, revoked_at__isnull=True).exists()
    else:
        session = request._request.session
        held = (
            session.session_key is not None
            and constant_time_compare(
                session.get(HASH_SESSION_KEY, ""), user.get_session_auth_hash()
            )
            and session.exists(session.session_key)
        )
    if held:
        request.user = user
    return held


def _admitted(request: Request) -> bool:
    close_old_connections()
    try:
        return _credentials_hold(request)
    finally:
        close_old_connections()


def _next_page(request: Request, after: int) -> list[MemoryEvent] | None:
    """The events after `after`; None once the credentials no longer hold,
    read memory was revoked, or the conversation or acted-for user went out
    of reach, which ends the stream (a reconnect is then refused)."""
    close_old_connections()
    try:
        if not _credentials_hold(request):
            return None
        return events_page(request, after=after, limit=PAGE)
    except (PermissionDenied, NotFound):
        return None
    finally:
        close_old_connections()


class _Stream:
    """The stream's state between reads: cursor, keepalive and lifetime clocks."""

    def __init__(self, after: int) -> None:
        self.cursor = after
        self.started = self.quiet_since = time.monotonic()

    def frames(self, page: list[MemoryEvent]) -> list[str]:
        out = [_frame(event) for event in page]
        now = time.monotonic()
        if page:
            self.cursor = page[-1].id
            self.quiet_since = now
        elif now - self.quiet_since >= KEEPALIVE_SECONDS:
            out.append(": keepalive\n\n")
            self.quiet_since = now
        return out

    def over(self) -> bool:
        return time.monotonic() - self.started >= MAX_STREAM_SECONDS


def _newest_event_id() -> int:
    close_old_connections()
    try:
        return MemoryEvent.objects.aggregate(newest=Max("id"))["newest"] or 0
    finally:
        close_old_connections()


_newest_reads: WeakKeyDictionary = WeakKeyDictionary()


async def _newest_shared() -> int:
    """The outbox's newest id, read at most once per POLL_SECONDS per event
    loop however many streams are open: an idle stream costs no query of its
    own, and only a stream with something new to look at runs its visibility
    query."""
    loop = asyncio.get_running_loop()
    read_at, pending = _newest_reads.get(loop, (0.0, None))
    if pending is None or time.monotonic() - read_at >= POLL_SECONDS:
        pending = asyncio.ensure_future(sync_to_async(_newest_event_id, thread_sensitive=False)())
        _newest_reads[loop] = (time.monotonic(), pending)
    return await asyncio.shield(pending)


async def _frames_async(request: Request, first: list[MemoryEvent], after: int, checked: int):
    """Under ASGI: a waiting stream holds no thread. `checked` is the newest
    outbox id this stream's query has already covered."""
    stream, page = _Stream(after), first
    admitted_at = time.monotonic()
    yield f"retry: {RETRY_MILLISECONDS}\n\n"
    while True:
        for frame in stream.frames(page):
            yield frame
        if stream.over():
            return
        newest = None
        if len(page) < PAGE:
            await asyncio.sleep(POLL_SECONDS)
            newest = await _newest_shared()
        if newest is not None and newest <= checked:
            page = []
            # Nothing new to read, which would check the credentials: a
            # quiet stream checks them as often as it sends a keepalive.
            if time.monotonic() - admitted_at >= KEEPALIVE_SECONDS:
                if not await sync_to_async(_admitted, thread_sensitive=False)(request):
                    return
                admitted_at = time.monotonic()
        else:
            page = await sync_to_async(_next_page, thread_sensitive=False)(request, stream.cursor)
            if page is None:
                return
            if newest is not None and len(page) < PAGE:
                checked = newest


def _frames_sync(request: Request, first: list[MemoryEvent], after: int):
    """Under WSGI (a development server): the stream holds its thread, and
    writes a comment on every quiet poll, since only a failed write tells a
    WSGI server that the client has gone."""
    stream, page = _Stream(after), first
    yield f"retry: {RETRY_MILLISECONDS}\n\n"
    while True:
        yield from stream.frames(page) or [":\n\n"]
        if stream.over():
            return
        if len(page) < PAGE:
            time.sleep(POLL_SECONDS)
        page = _next_page(request, stream.cursor)
        if page is None:
            return


@extend_schema(
    operation_id="events_stream",
    summary="Events as Server-Sent Events, resumable with Last-Event-ID",
    description=(
        "Each SSE message has `id:` = the event id and `data:` = the event as in "
        "GET /api/v1/events. Reconnect with `Last-Event-ID` (or `?after=`) to "
        "continue exactly after the last event seen. The same visibility and `conversation` "
        "filter as GET /api/v1/events."
    ),
    parameters=[
        OpenApiParameter("after", int, description="Start after this event id."),
        OpenApiParameter("conversation", str, description="Only this conversation's events."),
        OpenApiParameter(
            "Last-Event-ID", int, OpenApiParameter.HEADER, description="Resume after this id."
        ),
    ],
    responses={200: OpenApiResponse(description="text/event-stream")},
    tags=["events"],
)
@api_view(["GET", "HEAD"])
def events_stream(request: Request) -> HttpResponse:
    after = _cursor(request)
    checked = _newest_event_id()  # read first: the page below covers at least this far
    first = events_page(request, after=after, limit=PAGE)  # 404s before the stream starts
    if request.method == "HEAD":
        # What a GET would answer, without opening a stream nobody will read.
        return _stream_headers(HttpResponse(content_type="text/event-stream"))
    if isinstance(request._request, ASGIRequest):
        # The stream outlives this view, and so would this request thread's
        # connection: one per open stream, until PostgreSQL runs out. Its
        # reads run on the shared pool threads instead.
        connection.close()
        frames = _frames_async(request, first, after, checked)
    else:
        frames = _frames_sync(request, first, after)
    return _stream_headers(StreamingHttpResponse(frames, content_type="text/event-stream"))


def _stream_headers(response: HttpResponse) -> HttpResponse:
    """No cache or proxy may hold the frames back."""
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response
