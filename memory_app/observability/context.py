"""The request id of the work in progress, for every log line it writes."""

import re
import uuid
from contextvars import ContextVar

request_id_var: ContextVar[str] = ContextVar("request_id", default="")

_VALID = re.compile(r"^[\w.:-]{1,100}$")


def request_id_from(incoming: str | None) -> str:
    """The caller's X-Request-ID when it is a plain token, else a new one."""
    if incoming and _VALID.match(incoming):
        return incoming
    return uuid.uuid4().hex
