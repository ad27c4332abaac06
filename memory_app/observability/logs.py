"""One JSON object per log line (LOG_FORMAT=json), with the request id.

Only the fields below leave the process: the message, and the structured
`extra` keys the request log sets. Memory content and tokens are never passed
to a logger in the first place; this formatter adds nothing from the request.
"""

import json
import logging
from datetime import UTC, datetime

from memory_app.observability.context import request_id_var

EXTRA_FIELDS = ("principal", "method", "path", "route", "status", "duration_ms", "tool")


class RequestIdFilter(logging.Filter):
    """Stamps each record with the id of the request it belongs to.

    Django logs a 4xx or 5xx answer after the middleware has returned, with
    the request attached but the context's id already reset: the id kept on
    the request names it then."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, "request_id", ""):
            request = getattr(record, "request", None)
            record.request_id = request_id_var.get() or getattr(request, "request_id", "")
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
