"""Raw log dumps: more than 30 lines of log in one field.

Memory should hold what was learned from logs, not the logs; a dump is also
where tokens and personal data hide.

A dump is recognised by structure, not by a list of formats. A line is a
log *event* when it carries a time of day or a date anywhere, a severity
token, a `process[pid]:` or thread field, an HTTP request with its status,
or is a JSON object with a time or level key. A line *continues* an event
when it is a stack frame, or when its template (the line with numbers,
addresses and quoted strings masked) recurs in the same text and it holds a
measurement: the indented detail lines of GC logs, metrics dumps and the
like. Continuation lines count only in an unbroken run of log lines that
holds an event; more than 30 such lines make a dump. Code, tables, lists
and prose have neither timestamps nor runs of recurring numeric templates,
so they are never flagged, and 30 log lines or fewer are a snippet, which
is fine.
"""

import json
import re
from collections import Counter

from memory_app.safety.types import Detector, Span

MAX_LOG_LINES = 30

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*"
_TIMESTAMP = re.compile(
    r"(?<![\d.])\d{1,2}:\d{2}:\d{2}(?:[.,:]\d+)?(?!\d)"  # time of day, anywhere
    r"|\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?:[T ]\d{1,2}:\d{2})?"  # ISO and slashed dates
    rf"|\b\d{{1,2}}[-/ ]{_MONTH}[-/ ]\d{{2,4}}\b|\b{_MONTH} +\d{{1,2}}\b"  # 20/May/2015, Mar 30
    r"|^\d{6}[ -]\d{6}\b"  # HDFS, HealthApp compact stamps
)
_LEVEL = re.compile(
    r"\b(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|CRIT|CRITICAL|ALERT|EMERG|FATAL"
    r"|SEVERE|FINE|FINER|FINEST|VERBOSE)\b"
    r"|^\s*[IWEFDV]\d{4}\s"  # klog / glog
    r"|\s\d+\s+\d+\s[VDIWEF]\s"  # logcat: pid tid level
    r"|\b[VDIWEF]/[\w.$-]+\(\s*\d+\):"  # logcat brief: I/Tag( 123):
    r"|(?:^|\t)(?:Information|Warning|Error|Critical|Verbose)\t"  # Windows event export
)
_PROCESS = re.compile(
    r"\b[\w.-]+\[\d+\]:"  # sshd[14712]:
    r"|\b(?:pid|tid|thread|thread_id|process)[=:]\s*\d+"
    r"|\[(?:main|[\w-]*thread[\w-]*|pool-\d+-thread-\d+|[\w-]+-\d+)\]",
    re.I,
)
_HTTP = re.compile(r"\"(?:GET|POST|PUT|DELETE|HEAD|PATCH|OPTIONS) \S+ HTTP/\d(?:\.\d)?\" \d{3}\b")
_KEY_VALUE = re.compile(r"\b[\w.-]+=(?:\"[^\"]*\"|\S+)")
_JSON_LOG_KEYS = {"time", "timestamp", "ts", "@timestamp", "level", "severity", "msg", "message"}
_STACK_FRAME = re.compile(
    r"^[\w.$]+(?:Exception|Error|Throwable)\b|^Traceback \(most recent call last\):"
    r"|^\s+at [\w.$<>]+\(|^\s*\.\.\. \d+ more|^\s*Caused by: |^\s+/\S+\.\w+:\d+"
    r"|^\s+File \".+\", line \d+"
)
_MASK_NUMBER = re.compile(r"0x[0-9a-f]+|\d+", re.I)
_MASK_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")
_MASK_WORDS = re.compile(r"[A-Za-z_]+(?:\s+[A-Za-z_]+)*")
# A measurement line: a number next to a field separator (GC detail lines,
# metrics dumps), unlike a sentence that happens to hold a number.
_MEASUREMENT = re.compile(r"[\[\]{}=:|]\s*[\d.]+|\d\s*[\[\]{}=:|]")
_NOT_LOG_TEXT = re.compile(r"^\s*(?:\||[-*+] |#|>|```|\d+\. )")


def _is_json_log(line: str) -> bool:
    stripped = line.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return False
    try:
        record = json.loads(stripped)
    except ValueError:
        return False
    return isinstance(record, dict) and bool(_JSON_LOG_KEYS & set(record))


def _is_event(line: str) -> bool:
    if _TIMESTAMP.search(line) or _HTTP.search(line) or _is_json_log(line):
        return True
    evidence = bool(_LEVEL.search(line)) + bool(_PROCESS.search(line))
    return evidence >= 2 or (evidence == 1 and len(_KEY_VALUE.findall(line)) >= 2)


def _continues(line: str, templates: Counter) -> bool:
    if not line.strip() or _NOT_LOG_TEXT.match(line):
        return False
    if _STACK_FRAME.match(line):
        return True
    return templates[_template(line)] > 1 and bool(_MEASUREMENT.search(line))


def _template(line: str) -> str:
    """The line's shape: words, numbers and quoted strings masked, punctuation kept."""
    masked = _MASK_QUOTED.sub('"', _MASK_NUMBER.sub("0", line))
    return " ".join(_MASK_WORDS.sub("a", masked).split())


def _log_dump_spans(text: str) -> list[Span]:
    lines = text.split("\n")
    if sum(1 for line in lines if line.strip()) <= MAX_LOG_LINES:
        return []
    templates = Counter(_template(line) for line in lines if line.strip())
    log_lines = 0
    # A run of log lines survives two odd lines (a message that wrapped, a
    # one-off detail line); a blank line or a third odd line ends it.
    run, run_has_event, odd = 0, False, 0
    for line in [*lines, ""]:
        event = bool(line.strip()) and not _NOT_LOG_TEXT.match(line) and _is_event(line)
        if event or _continues(line, templates):
            run += 1 + odd
            run_has_event, odd = run_has_event or event, 0
            continue
        if line.strip() and run and odd < 2:
            odd += 1
            continue
        if run_has_event:
            log_lines += run
        run, run_has_event, odd = 0, False, 0
    if log_lines <= MAX_LOG_LINES:
        return []
    return [Span("raw_log_dump", 0, len(text))]


DETECTORS = [Detector("logs", _log_dump_spans)]
