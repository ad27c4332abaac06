"""The ASGI application: Django, with the MCP endpoint mounted at /mcp.

Serve it with uvicorn (README, "Running in production").
"""

import asyncio
import io
import os
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, suppress

import django
from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.conf import settings
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.http import FileResponse, HttpResponseBase, JsonResponse
from django.urls import set_script_prefix

from memory_app.errors import TooLarge
from memory_app.request_body import body_within_limit

# Idle request threads kept for the next requests; more than this many at
# once are shut down after their request, as Django's handler does with all.
IDLE_THREADS = 16


def _too_large() -> JsonResponse:
    """The API's error envelope (API.md, 413 too_large)."""
    error = TooLarge.body()
    return JsonResponse({"error": error.code, "detail": error.detail}, status=error.status)


def _declared_over_limit(scope) -> dict:
    """The request of a page's form whose body passed the limit, as Django
    itself refuses one: declaring a length over the limit, with no body, so
    the first read of its form data raises RequestDataTooBig and the project's
    400 handler draws the app's page with the reason (review_app.errors)."""
    over = str(settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1).encode()
    headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
    return {**scope, "headers": [*headers, (b"content-length", over)]}


class SyncStackHandler(ASGIHandler):
    """Django's ASGI handler, running the request stack in one call to its thread,
    a thread kept from an earlier request.

    Our middleware and views are all synchronous. Django's own handler still
    builds an async stack around them: the middleware ran in the request's
    thread, came back to the event loop to resolve the URL and run the view
    middleware (one more trip each), then went to the thread again for the
    view, every crossing costing futures, context copies and wake-ups of
    both sides. Here the whole stack, middleware to view, runs as under WSGI
    in one call to the request's thread. An async view still works: Django
    calls it through `async_to_sync`.

    Django also starts a thread for every request and joins it afterwards
    (0.3 ms of CPU and 0.6 ms wall each, docs/benchmarks.md). Here each
    request still has a thread of its own, one at a time, but one that an
    earlier request finished with: nothing of a request stays in it, as
    Django keeps a request's state (its database connection too) in the
    request's context, not in the thread.
    """

    def __init__(self) -> None:
        super().__init__()
        self._idle: list[ThreadPoolExecutor] = []

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        executor = self._idle.pop() if self._idle else ThreadPoolExecutor(max_workers=1)
        try:
            async with ThreadSensitiveContext(executor=executor):
                await self.handle(scope, receive, send)
        finally:
            if len(self._idle) < IDLE_THREADS:
                self._idle.append(executor)
            else:
                executor.shutdown(wait=False)

    async def handle(self, scope, receive, send):
        """The body read on the event loop; everything else, from the request's
        start to its end, in one call to the request's thread; then the answer
        sent. Django's handler crosses to the thread three times (the start
        signal, the response, its closing). A streaming answer is closed
        after it is sent, as Django does, and stops when its client goes."""
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        except TooLarge:
            if scope["path"].startswith("/api/"):
                await self.send_response(_too_large(), send)
                return
            scope, body_file = _declared_over_limit(scope), io.BytesIO()
        with closing(body_file):
            set_script_prefix(get_script_prefix(scope))
            response = await sync_to_async(self._respond, thread_sensitive=True)(scope, body_file)
            if not response.streaming:
                await self.send_response(response, send)
                return
            try:
                await self._stream(response, receive, send)
            finally:
                await sync_to_async(response.close, thread_sensitive=True)()

    async def read_body(self, receive):
        """The body, refused once it passes the size limit.

        Django's own reading takes the whole body, spilling to a temporary
        file, before any middleware can look at its size: a client could
        have the server write gigabytes to disk without a token. No endpoint
        takes uploads, so the limit is the one every request body is held
        to (MEMORY_MAX_BODY_BYTES), and the body is held in memory, as
        Django would hold one that size."""
        return io.BytesIO(await body_within_limit(receive))

    async def _stream(self, response, receive, send) -> None:
        """Send a streaming answer until it ends or its client disconnects.

        An event stream waits between its frames for as long as minutes; a
        client that has gone must not keep it polling, so the sending is
        cancelled on the disconnect, as in Django's own handler."""
        sending = asyncio.ensure_future(self.send_response(response, send))
        listening = asyncio.ensure_future(self.listen_for_disconnect(receive))
        await asyncio.wait({sending, listening}, return_when=asyncio.FIRST_COMPLETED)
        for task in (sending, listening):
            task.cancel()
        for task in (sending, listening):
            with suppress(asyncio.CancelledError, RequestAborted):
                await task

    def _respond(self, scope, body_file) -> HttpResponseBase:
        signals.request_started.send(sender=self.__class__, scope=scope)
        request, response = self.create_request(scope, body_file)
        if request is not None:
            response = self.get_response(request)
            response._handler_class = self.__class__
            if isinstance(response, FileResponse):
                response.block_size = self.chunk_size
        if not response.streaming:
            # Ends the request (request_finished): its database connection
            # goes back to the pool before the answer is sent.
            response.close()
        return response


os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup(set_prefix=False)
django_application = SyncStackHandler()

from memory_app.mcp.asgi import with_mcp  # noqa: E402  (needs Django set up first)

application = with_mcp(django_application)

from memory_app.embeddings import get_backend  # noqa: E402
from memory_app.safety import prepare as prepare_scanner  # noqa: E402

# The scanner's native patterns (about a second) and the embedding model
# (about half a second) are made ready as the process starts, so its first
# search or write does not wait for them.
prepare_scanner()
get_backend()
