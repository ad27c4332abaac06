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
from bisect import bisect_right
from collections import Counter

from memory_app.safety.types import Detector, Span

MAX_LOG_LINES = 30

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*"
# The line patterns never cross a line end ([^\S\n] for a space, ^ per
# line), so one pass over the whole text finds the lines each one fits:
# much cheaper than a call per line.
# Each pattern opens with a look-ahead of its possible first characters:
# the regex engine then skips other positions at once (several times faster).
_TIMESTAMP = re.compile(
    r"(?=[\dJFMASOND])(?:"
    r"(?<![\d.])\d{1,2}:\d{2}:\d{2}(?:[.,:]\d+)?(?!\d)"  # time of day, anywhere
    r"|\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?:[T ]\d{1,2}:\d{2})?"  # ISO and slashed dates
    rf"|\b\d{{1,2}}[-/ ]{_MONTH}[-/ ]\d{{2,4}}\b|\b{_MONTH} +\d{{1,2}}\b"  # 20/May/2015, Mar 30
    r"|^\d{6}[ -]\d{6}\b)",  # HDFS, HealthApp compact stamps
    re.M,
)
_LEVEL = re.compile(
    r"(?=[TDINWECAFSV\d\t])(?:"
    r"\b(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|CRIT|CRITICAL|ALERT|EMERG|FATAL"
    r"|SEVERE|FINE|FINER|FINEST|VERBOSE)\b"
    r"|^[IWEFDV]\d{4}[^\S\n]"  # klog / glog
    r"|(?<=[^\S\n])\d+[^\S\n]+\d+[^\S\n][VDIWEF][^\S\n]"  # logcat: pid tid level
    r"|\b[VDIWEF]/[\w.$-]+\([^\S\n]*\d+\):"  # logcat brief: I/Tag( 123):
    r"|(?:^|\t)(?:Information|Warning|Error|Critical|Verbose)\t)"  # Windows event export
    r"|^[^\S\n]+[IWEFDV]\d{4}[^\S\n]",  # indented klog
    re.M,
)
_PROCESS = re.compile(
    r"(?=[pt\[])(?:(?<=[\w.-])\[\d+\]:"  # sshd[14712]:
    r"|\b(?:pid|tid|thread|thread_id|process)[=:][^\S\n]*\d+"
    r"|\[(?:main|[\w-]*thread[\w-]*|pool-\d+-thread-\d+|[\w-]+-\d+)\])",
    re.I | re.M,
)
_HTTP = re.compile(r"\"(?:GET|POST|PUT|DELETE|HEAD|PATCH|OPTIONS) \S+ HTTP/\d(?:\.\d)?\" \d{3}\b")
_KEY_VALUE = re.compile(r"\b[\w.-]+=(?:\"[^\"]*\"|\S+)")
_JSON_LOG_KEYS = {"time", "timestamp", "ts", "@timestamp", "level", "severity", "msg", "message"}
_STACK_FRAME = re.compile(
    r"^[\w.$]+(?:Exception|Error|Throwable)\b|^Traceback \(most recent call last\):"
    r"|^[^\S\n]+at [\w.$<>]+\(|^[^\S\n]*\.\.\. \d+ more|^[^\S\n]*Caused by: "
    r"|^[^\S\n]+/\S+\.\w+:\d+|^[^\S\n]+File \".+\", line \d+",
    re.M,
)
_MASK_NUMBER = re.compile(r"0x[0-9a-f]+|\d+", re.I)
_MASK_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")
_MASK_WORDS = re.compile(r"[A-Za-z_]+(?:\s+[A-Za-z_]+)*")
# A measurement line: a number next to a field separator (GC detail lines,
# metrics dumps), unlike a sentence that happens to hold a number.
_MEASUREMENT = re.compile(r"[\[\]{}=:|][^\S\n]*[\d.]+|\d[^\S\n]*[\[\]{}=:|]")
_NOT_LOG_TEXT = re.compile(r"^[^\S\n]*(?:\||[-*+] |#|>|```|\d+\. )", re.M)


def _is_json_log(line: str) -> bool:
    stripped = line.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return False
    try:
        record = json.loads(stripped)
    except ValueError:
        return False
    return isinstance(record, dict) and bool(_JSON_LOG_KEYS & set(record))


class _Lines:
    """Which lines of a text each line pattern fits, found in one pass each."""

    def __init__(self, text: str, lines: list[str]) -> None:
        self.text, self.lines = text, lines
        self.starts = [0]
        for line in lines[:-1]:
            self.starts.append(self.starts[-1] + len(line) + 1)
        self.stamped = self._fit(_TIMESTAMP) | self._fit(_HTTP)
        self.levelled = self._fit(_LEVEL)
        self.processed = self._fit(_PROCESS)

    def most_log_lines(self) -> int:
        """An upper bound on the log lines, from the event patterns alone.

        A run of log lines never crosses a blank line and must hold an
        event, so only the blocks between blank lines that hold a line an
        event pattern fits can count, each at most all its lines.
        """
        candidates = self.stamped | self.levelled | self.processed
        total, block, has_candidate = 0, 0, False
        for index, line in enumerate(self.lines):
            if line.strip():
                block += 1
                has_candidate = has_candidate or index in candidates or line.lstrip()[:1] == "{"
                continue
            total += block if has_candidate else 0
            block, has_candidate = 0, False
        return total

    def measure(self) -> None:
        """The patterns only continuation lines need, run once a dump is possible."""
        self.framed = self._fit(_STACK_FRAME)
        self.measured = self._fit(_MEASUREMENT)
        self.plain = self._fit(_NOT_LOG_TEXT)
        # Only a measurement line can continue an event, so only those
        # lines' templates are counted.
        self.templates = Counter(_template(self.lines[i]) for i in self.measured)

    def _fit(self, pattern: re.Pattern[str]) -> set[int]:
        return {
            bisect_right(self.starts, match.start()) - 1 for match in pattern.finditer(self.text)
        }

    def is_event(self, index: int) -> bool:
        """A line of its own: a time, an HTTP request, a JSON record, level and process."""
        if index in self.plain:
            return False
        line = self.lines[index]
        if index in self.stamped or _is_json_log(line):
            return True
        evidence = (index in self.levelled) + (index in self.processed)
        return evidence >= 2 or (evidence == 1 and len(_KEY_VALUE.findall(line)) >= 2)

    def continues(self, index: int) -> bool:
        """A stack frame, or a measurement whose template recurs."""
        if index in self.plain:
            return False
        if index in self.framed:
            return True
        return index in self.measured and self.templates[_template(self.lines[index])] > 1


def _template(line: str) -> str:
    """The line's shape: words, numbers and quoted strings masked, punctuation kept."""
    masked = _MASK_QUOTED.sub('"', _MASK_NUMBER.sub("0", line))
    return " ".join(_MASK_WORDS.sub("a", masked).split())


def _log_dump_spans(text: str) -> list[Span]:
    lines = text.split("\n")
    if sum(1 for line in lines if line.strip()) <= MAX_LOG_LINES:
        return []
    lines.append("")
    found = _Lines(text + "\n", lines)
    if found.most_log_lines() <= MAX_LOG_LINES:
        return []
    found.measure()
    log_lines = 0
    # A run of log lines survives two odd lines (a message that wrapped, a
    # one-off detail line); a blank line or a third odd line ends it.
    run, run_has_event, odd = 0, False, 0
    for index, line in enumerate(lines):
        blank = not line.strip()
        event = not blank and found.is_event(index)
        if event or (not blank and found.continues(index)):
            run += 1 + odd
            run_has_event, odd = run_has_event or event, 0
            continue
        if not blank and run and odd < 2:
            odd += 1
            continue
        if run_has_event:
            log_lines += run
        run, run_has_event, odd = 0, False, 0
    if log_lines <= MAX_LOG_LINES:
        return []
    return [Span("raw_log_dump", 0, len(text))]


DETECTORS = [Detector("logs", _log_dump_spans)]
