"""One JSON object per log line (LOG_FORMAT=json), with the request id.

Only the fields below leave the process: the message, and the structured
`extra` keys the request log sets. Memory content and tokens are never passed
to a logger in the first place; this formatter adds nothing from the request.
"""

import json
import logging
from datetime import UTC, datetime

from memory_app.errors import reads_as_name
from memory_app.observability.context import request_id_var

EXTRA_FIELDS = ("principal", "method", "path", "route", "status", "duration_ms", "tool")


# Django's own lines about a request name its path as their argument.
_PATH_LOGGERS = ("django.request", "django.security")


def path_for_log(path: str) -> str:
    """`path` with each segment that does not read as a name replaced by
    "…": a key or token sent as part of an address stays out of the logs."""
    return "/".join(part if not part or reads_as_name(part) else "…" for part in path.split("/"))


class RequestIdFilter(logging.Filter):
    """Stamps each record with the id of the request it belongs to, and
    keeps token-like path segments out of it (path_for_log).

    Django logs a 4xx or 5xx answer after the middleware has returned, with
    the request attached but the context's id already reset: the id kept on
    the request names it then."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, "request_id", ""):
            request = getattr(record, "request", None)
            record.request_id = request_id_var.get() or getattr(request, "request_id", "")
        if isinstance(getattr(record, "path", None), str):
            record.path = path_for_log(record.path)
        if record.name.startswith(_PATH_LOGGERS) and isinstance(record.args, tuple):
            record.args = tuple(
                path_for_log(arg) if isinstance(arg, str) and arg.startswith("/") else arg
                for arg in record.args
            )
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", ""),
        }
        for field in EXTRA_FIELDS:
            if hasattr(record, field):
                entry[field] = getattr(record, field)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)
