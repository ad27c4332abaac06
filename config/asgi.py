"""The ASGI application: Django, with the MCP endpoint mounted at /mcp.

Serve it with uvicorn (README, "Running in production").
"""

import os

import django
from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler


class SyncStackHandler(ASGIHandler):
    """Django's ASGI handler, running the request stack in one call to its thread.

    Our middleware and views are all synchronous. Django's own handler still
    builds an async stack around them: the middleware ran in the request's
    thread, came back to the event loop to resolve the URL and run the view
    middleware (one more trip each), then went to the thread again for the
    view, every crossing costing futures, context copies and wake-ups of
    both sides. Here the whole stack, middleware to view, runs as under WSGI
    in one call to the request's thread. An async view still works: Django
    calls it through `async_to_sync`.
    """

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)

    async def get_response_async(self, request):
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)


os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup(set_prefix=False)
django_application = SyncStackHandler()

from memory_app.mcp.asgi import with_mcp  # noqa: E402  (needs Django set up first)

application = with_mcp(django_application)
