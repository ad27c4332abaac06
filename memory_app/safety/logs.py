"""Raw log dumps: more than 30 lines of log in one field.

Memory should hold what was learned from logs, not the logs; a dump is also
where tokens and personal data hide.

A dump is recognised by structure, not by a list of formats. A line is a
log *event* when it carries a time of day, a date or Unix seconds anywhere, a severity
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
import operator
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable
from itertools import compress, count, repeat

from ahocorasick_rs import AhoCorasick, Implementation

from memory_app.safety.prefilter import line_starts
from memory_app.safety.types import Detector, Span

MAX_LOG_LINES = 30

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*"
# The line patterns never cross a line end ([^\S\n] for a space, ^ per
# line), so one pass over the whole text finds the lines each one fits:
# much cheaper than a call per line. Each is searched for by the characters
# its matches open with (`_LinePattern`).
_TIMESTAMP = re.compile(
    r"(?<![\d.])\d{1,2}:\d{2}:\d{2}(?:[.,:]\d+)?(?!\d)"  # time of day, anywhere
    r"|\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?:[T ]\d{1,2}:\d{2})?"  # ISO and slashed dates
    rf"|\b\d{{1,2}}[-/ ]{_MONTH}[-/ ]\d{{2,4}}\b|\b{_MONTH} +\d{{1,2}}\b"  # 20/May/2015, Mar 30
    r"|^\d{6}[ -]\d{6}\b"  # HDFS, HealthApp compact stamps
    # Unix seconds (2001 to 2033) standing as a field of their own, not as a
    # cell of a CSV or a path: BGL, HPC, Thunderbird, mosquitto.
    r"|(?<![\w.,;|/-])1\d{9}(?:\.\d{1,6})?(?![\w.,;|/-])",
    re.M,
)
_LEVEL = re.compile(
    r"\b(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|CRIT|CRITICAL|ALERT|EMERG|FATAL"
    r"|SEVERE|FINE|FINER|FINEST|VERBOSE)\b"
    r"|^[IWEFDV]\d{4}[^\S\n]"  # klog / glog
    r"|(?<=[^\S\n])\d+[^\S\n]+\d+[^\S\n][VDIWEF][^\S\n]"  # logcat: pid tid level
    r"|\b[VDIWEF]/[\w.$-]+\([^\S\n]*\d+\):"  # logcat brief: I/Tag( 123):
    r"|(?:^|\t)(?:Information|Warning|Error|Critical|Verbose)\t",  # Windows event export
    re.M,
)
_LEVEL_INDENTED = re.compile(r"^[^\S\n]+[IWEFDV]\d{4}[^\S\n]", re.M)  # indented klog
_PROCESS = re.compile(
    r"(?<=[\w.-])\[\d+\]:"  # sshd[14712]:
    r"|\[(?:main|[\w-]*thread[\w-]*|pool-\d+-thread-\d+|[\w-]+-\d+)\]",
    re.I | re.M,
)
# pid=123, thread: 7. Matched from its separator, which is much rarer than
# the first letters of the field names.
_PROCESS_FIELD = re.compile(
    r"(?:(?<=\bpid)|(?<=\btid)|(?<=\bthread)|(?<=\bthread_id)|(?<=\bprocess))[=:][^\S\n]*\d+",
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
# Markdown: a table row, a list item (not BGL's "- " before Unix seconds), a
# heading, a quote, a code fence, a numbered item.
_NOT_LOG_TEXT = re.compile(r"^[^\S\n]*(?:\||[-*+] (?!1\d{9}\b)|#|>|```|\d+\. )", re.M)


class _LinePattern:
    """A line pattern, searched for by the characters its matches open with.

    The regex engine skips to the next character of the set a pattern
    opens with in one fast loop, and tries the pattern only there; a
    pattern that opens with a look-around, `\b` or an alternation is tried
    at every position instead. So the search is for one character of
    `first` at which the pattern matches (a look-behind steps back over it
    and a look-ahead holds the pattern); all `_Lines` needs is the line.
    A pattern whose every match starts a line (`first=None`) is looked
    for after each line break, and at the start of the text.
    """

    def __init__(self, pattern: re.Pattern[str], first: str | None) -> None:
        self.pattern = pattern
        inner = f"(?i:{pattern.pattern})" if pattern.flags & re.I else pattern.pattern
        flags = pattern.flags & ~re.I
        if first is None:
            self.finder = re.compile(rf"\n(?={inner})", flags)
        else:
            self.finder = re.compile(rf"[{first}](?<=(?={inner}).)", flags)
        # A line break found stands for the line after it.
        self.shift = int(first is None)

    def lines(self, text: str, starts: list[int], start: int, end: int) -> set[int]:
        """The lines of text[start:end] (whole lines) that the pattern fits."""
        found = {
            bisect_right(starts, match.start()) - 1 + self.shift
            for match in self.finder.finditer(text, max(start - self.shift, 0), end)
        }
        if self.shift and start == 0 and self.pattern.match(text):
            found.add(0)
        return found


def _shape_of(byte: int) -> int:
    if chr(byte).isdigit():
        return ord("0")
    return ord(" ") if chr(byte).isspace() and byte != ord("\n") else byte


# The text's shape, for the signatures below: each ASCII digit "0", each
# other ASCII space but the line break " ", each character outside ASCII
# one "?" (as encoding replaces it); positions are the text's.
_SHAPE = bytes(map(_shape_of, range(128))) + b"?" * 128


class _SignedPattern:
    """A line pattern whose every match holds one of a few signatures.

    A signature is a substring of the text's shape (`_SHAPE`) that no
    match can lack: "0:00:00" for a time of day, "INFO" for a level. The
    signatures of all such patterns are found in one Aho-Corasick pass
    over the shape, and the pattern's finder runs only on the lines that
    hold one, and on lines with a character outside ASCII (a digit or a
    space of another script, a letter that matches case-blind). Most lines
    of a note hold no signature; the finder alone tries the pattern at
    every digit of the text. A match never crosses a line end, so the
    lines found are the finder's over the whole text.
    """

    def __init__(self, line_pattern: _LinePattern, signatures: Iterable[str]) -> None:
        self.finder = line_pattern.finder
        # A case-blind pattern's signatures are lower case, found in the shape lowered.
        self.folded = bool(line_pattern.pattern.flags & re.I)
        self.signatures = tuple(signatures)


_TIMESTAMP_SIGNED = _SignedPattern(
    _LinePattern(_TIMESTAMP, r"\dJFMASOND"),
    [
        *("0:00:00", "0000-0", "0000/0", "0000.0", "000000 0", "000000-0", "0000000000"),
        *("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"),
    ],
)
_LEVEL_SIGNED = _SignedPattern(
    _LinePattern(_LEVEL, r"TDINWECAFSV\d\t"),
    [
        *("TRACE", "DEBUG", "INFO", "NOTICE", "WARN", "ERR", "CRIT", "ALERT", "EMERG", "FATAL"),
        *("SEVERE", "FINE", "VERBOSE", "Information", "Warning", "Error", "Critical", "Verbose"),
        *(f"{level}0000" for level in "IWEFDV"),  # klog: I1125
        *(f"0 {level} " for level in "VDIWEF"),  # logcat: pid tid level
        *(f"{level}/" for level in "VDIWEF"),  # logcat brief: I/Tag
    ],
)
_PROCESS_FIELD_SIGNED = _SignedPattern(
    _LinePattern(_PROCESS_FIELD, "=:"),
    [f"{name}{sep}" for name in ("pid", "tid", "thread", "thread_id", "process") for sep in "=:"],
)
_SIGNED = (_TIMESTAMP_SIGNED, _LEVEL_SIGNED, _PROCESS_FIELD_SIGNED)


def _automaton(folded: bool) -> tuple[AhoCorasick, list[_SignedPattern]]:
    patterns = [p for p in _SIGNED if p.folded == folded]
    owners = [p for p in patterns for _ in p.signatures]
    signatures = [signature for p in patterns for signature in p.signatures]
    return AhoCorasick(signatures, implementation=Implementation.DFA), owners


_AUTOMATA = {folded: _automaton(folded) for folded in (False, True)}

_STAMPS = (_TIMESTAMP_SIGNED, _LinePattern(_HTTP, '"'))
_LEVELS = (_LEVEL_SIGNED, _LinePattern(_LEVEL_INDENTED, None))
_PROCESSES = (_LinePattern(_PROCESS, r"\["), _PROCESS_FIELD_SIGNED)
_FRAMES = (_LinePattern(_STACK_FRAME, None),)
_MEASUREMENTS = (_LinePattern(_MEASUREMENT, r"\[\]{}=:|\d"),)
_PLAIN_TEXT = (_LinePattern(_NOT_LOG_TEXT, None),)


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
        self.starts = line_starts(text)
        self.signed = self._signed_lines()
        self.stamped = self._fit(_STAMPS)
        self.levelled = self._fit(_LEVELS)
        self.processed = self._fit(_PROCESSES)

    def candidate_blocks(self) -> list[range]:
        """The blocks between blank lines that hold a line an event pattern fits.

        A run of log lines never crosses a blank line and must hold an
        event, so only these blocks can hold log lines; their length is an
        upper bound on the log lines. (Lines are looked at in bulk: a long
        note has hundreds.)
        """
        stripped = list(map(str.lstrip, self.lines))
        json_like = compress(count(), map(str.startswith, stripped, repeat("{")))
        candidates = sorted(self.stamped | self.levelled | self.processed | set(json_like))
        blocks, first = [], 0
        for blank in compress(count(), map(operator.not_, map(str.rstrip, stripped))):
            at = bisect_left(candidates, first)
            if first < blank and at < len(candidates) and candidates[at] < blank:
                blocks.append(range(first, blank))
            first = blank + 1
        return blocks

    def measure(self, blocks: list[range]) -> None:
        """The patterns only continuation lines need, run once a dump is possible.

        All three run only in the candidate blocks, the only lines that
        can be log lines; how often a measurement's template recurs is
        left to `count_templates`.
        """
        self.framed: set[int] = set()
        self.plain: set[int] = set()
        self.measured: set[int] = set()
        for block in blocks:
            self.framed |= self._fit(_FRAMES, block)
            self.plain |= self._fit(_PLAIN_TEXT, block)
            self.measured |= self._fit(_MEASUREMENTS, block)
        # The runs are counted up to three times (`_log_dump_spans`).
        self.events = {index for block in blocks for index in block if self.is_event(index)}
        self.template: dict[int, str] = {}
        self.recurring: Counter[str] | None = None

    def count_templates(self, everywhere: bool) -> None:
        """Count the templates of the measurement lines in the blocks, or in the text.

        A measurement line continues a log only if its template recurs
        anywhere in the text; counted in the blocks alone, a count is a
        lower bound. Each line's template is made once.
        """
        if everywhere:
            self.measured |= self._fit(_MEASUREMENTS)
        for index in self.measured - self.template.keys():
            self.template[index] = _template(self.lines[index])
        self.recurring = Counter(self.template.values())

    def _fit(
        self, patterns: tuple[_LinePattern | _SignedPattern, ...], block: range | None = None
    ) -> set[int]:
        if block is None:
            start, end = 0, len(self.text)
        else:
            start, end = self.starts[block.start], self.starts[block.stop]
        # The signed patterns are the event patterns, fitted to the whole text.
        return set().union(
            *(
                self.signed[p]
                if isinstance(p, _SignedPattern)
                else p.lines(self.text, self.starts, start, end)
                for p in patterns
            )
        )

    def _signed_lines(self) -> dict[_SignedPattern, set[int]]:
        """The lines each `_SignedPattern` fits, over the whole text."""
        shape = self.text.encode("ascii", "replace").translate(_SHAPE).decode("ascii")
        starts = self.starts
        candidates: dict[_SignedPattern, set[int]] = {p: set() for p in _SIGNED}
        for folded, (automaton, owners) in _AUTOMATA.items():
            haystack = shape.lower() if folded else shape
            for index, start, _end in automaton.find_matches_as_indexes(haystack, overlapping=True):
                candidates[owners[index]].add(bisect_right(starts, start) - 1)
        if not self.text.isascii():
            foreign, at = set(), shape.find("?")
            while at != -1:
                line = bisect_right(starts, at) - 1
                foreign.add(line)
                at = shape.find("?", starts[line + 1]) if line + 1 < len(starts) else -1
            for lines in candidates.values():
                lines |= foreign
        return {
            p: {line for line in lines if p.finder.search(self.text, *self._span(line))}
            for p, lines in candidates.items()
        }

    def _span(self, line: int) -> tuple[int, int]:
        """Where line `line` starts and where the next one does."""
        following = line + 1
        end = self.starts[following] if following < len(self.starts) else len(self.text)
        return self.starts[line], end

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
        """A stack frame, or a measurement whose template recurs.

        Before `count_templates` every measurement line in a block counts
        as continuing, and after counting in the blocks alone only those
        whose template recurs there: bounds from above and below, since a
        log line more never makes fewer lines count (it joins or lengthens
        runs, and a run it joins keeps its event).
        """
        if index in self.plain:
            return False
        if index in self.framed:
            return True
        if index not in self.measured:
            return False
        return self.recurring is None or self.recurring[self.template[index]] > 1


def _template(line: str) -> str:
    """The line's shape: words, numbers and quoted strings masked, punctuation kept."""
    masked = _MASK_QUOTED.sub('"', _MASK_NUMBER.sub("0", line))
    return " ".join(_MASK_WORDS.sub("a", masked).split())


def _log_dump_spans(text: str) -> list[Span]:
    lines = text.split("\n")
    if sum(map(bool, map(str.strip, lines))) <= MAX_LOG_LINES:
        return []
    lines.append("")
    found = _Lines(text + "\n", lines)
    blocks = found.candidate_blocks()
    if sum(len(block) for block in blocks) <= MAX_LOG_LINES:
        return []
    found.measure(blocks)
    # Most texts stay within the limit even with every measurement line of
    # their blocks taken as a log line, and most dumps exceed it with only
    # the templates that recur in the blocks; the rest need the whole text.
    if _count_log_lines(found, blocks) <= MAX_LOG_LINES:
        return []
    found.count_templates(everywhere=False)
    if _count_log_lines(found, blocks) <= MAX_LOG_LINES:
        found.count_templates(everywhere=True)
        if _count_log_lines(found, blocks) <= MAX_LOG_LINES:
            return []
    return [Span("raw_log_dump", 0, len(text))]


def _count_log_lines(found: _Lines, blocks: list[range]) -> int:
    """The lines of the blocks in unbroken runs of log lines that hold an event."""
    log_lines = 0
    # A run of log lines survives two odd lines (a message that wrapped, a
    # one-off detail line); the end of the block or a third odd line ends it.
    for block in blocks:
        run, run_has_event, odd = 0, False, 0
        for index in block:
            event = index in found.events
            if event or found.continues(index):
                run += 1 + odd
                run_has_event, odd = run_has_event or event, 0
                continue
            if run and odd < 2:
                odd += 1
                continue
            if run_has_event:
                log_lines += run
            run, run_has_event, odd = 0, False, 0
        if run_has_event:
            log_lines += run
    return log_lines


DETECTORS = [Detector("logs", _log_dump_spans)]
