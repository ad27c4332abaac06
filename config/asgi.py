"""The ASGI application: Django, with the MCP endpoint mounted at /mcp.

Serve it with uvicorn (README, "Running in production").
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_application = get_asgi_application()

from memory_app.mcp.asgi import with_mcp  # noqa: E402  (needs Django set up first)

application = with_mcp(django_application)
