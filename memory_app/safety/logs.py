"""Raw log dumps: more than 30 timestamped lines in one field.

Memory should hold what was learned from logs, not the logs; a dump is also
where tokens and personal data hide.
"""

import re

from memory_app.safety.types import Detector, Span

MAX_TIMESTAMPED_LINES = 30

_TIMESTAMP = re.compile(
    r"^\s*[\[(]?(?:"
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}"  # ISO 8601
    r"|\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}"  # Go log
    r"|[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2}"  # syslog
    r"|\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2}"  # access log
    r"|[IWEF]\d{4} \d{2}:\d{2}:\d{2}"  # klog / glog
    r"|\d{10}(?:\.\d+)?\s"  # epoch seconds
    r")",
    re.M,
)


def _log_dump_spans(text: str) -> list[Span]:
    hits = list(_TIMESTAMP.finditer(text))
    if len(hits) <= MAX_TIMESTAMPED_LINES:
        return []
    end = text.find("\n", hits[-1].start())
    return [Span("raw_log_dump", hits[0].start(), len(text) if end == -1 else end)]


DETECTORS = [Detector("logs", _log_dump_spans)]
