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
    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, "request_id", ""):
            record.request_id = request_id_var.get()
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
