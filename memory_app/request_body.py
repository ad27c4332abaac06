"""Reading a request's body over ASGI within the size limit every request
body is held to (MEMORY_MAX_BODY_BYTES), for Django's handler and the MCP
endpoint alike."""

from django.conf import settings
from django.core.exceptions import RequestAborted

from memory_app.errors import TooLarge


async def body_within_limit(receive, declared: int | None = None) -> bytes:
    """The whole body, refused (TooLarge) once it passes the limit: a
    declared length over it unread, a body without one as its bytes arrive,
    so nothing past the limit is ever held. RequestAborted when the client
    goes away first."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if declared is not None and declared > limit:
        raise TooLarge.body()
    chunks: list[bytes] = []
    received = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise RequestAborted()
        chunk = message.get("body", b"")
        received += len(chunk)
        if received > limit:
            raise TooLarge.body()
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)
