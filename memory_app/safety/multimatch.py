"""Where any of many patterns can match, found with one native pass.

A detector runs each of its rules' Python patterns on the regions its
gate picks (the lines around a stem, a long token, …), one pattern and
region at a time. Most of those runs find nothing. Hyperscan compiles
all of a detector's patterns into one automaton and reports, in one pass
over the text with the GIL released, where each pattern's matches end;
a region none of them ends in is then not searched, and a pattern with
no end in the text is not run at all.

Hyperscan reads neither Python's syntax nor its Unicode rules, so it is
not given the patterns as written. Each is given as a *necessary*
pattern, written from Python's own parse of it (`re._parser`, what `re`
compiles from), that some part of every match of the original matches
on its own, wherever the original is run (on the whole text or on a
region cut out of it):

* look-arounds, anchors and word boundaries are left out (they only ever
  reject), a back-reference becomes what its group matches, and a wide
  bounded repeat ({4,200}) loses its upper bound;
* repeats that open or close the pattern keep only their least count
  (a key's `[\\w.-]*` before the secret word goes; a value's
  `[^\\s]{4,200}` becomes four characters): what is left still lies
  inside every match, and is reported once instead of at every length;
* the text is given as one byte per character: ASCII as itself, the four
  letters outside ASCII that Python's case-blind matching takes for "i",
  "k" or "s" (a dotted capital I, a dotless i, a long s and the Kelvin
  sign) as 0xFE, which the classes of those letters take, and every
  other character as its code point or 0xFF, whichever is less; a class
  that can match a character outside ASCII (`\\w`, `\\s`, `\\d`, a negated
  class, `.`) takes every byte from 0x80 up. (A "þ", 0xFE itself, then
  passes for one of the four: the gate lets more through, never less.)

So a region that holds a match of a rule always holds the end of a match
of its necessary pattern, and skipping the others changes no finding
(tests/memory_app/safety/test_multimatch.py holds every rule to that). The
patterns are compiled on a process's first scan (0.3 s for the
credential rules, 0.7 s for the injection rules on the machine measured)
and kept; each thread scans with scratch space of its own.
"""

import re
import re._constants as sre
import re._parser as sre_parse
import threading
from bisect import bisect_right
from collections.abc import Mapping

import hyperscan
import numpy as np

_ASCII = frozenset(range(128))
_BEYOND_ASCII = frozenset(range(128, 256))
# Python's case-blind matching takes these for ASCII letters; each is
# given as this byte, which the classes of those letters take.
_FOLDED = 0xFE
_FOLDS = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)
_ZERO_WIDTH = (sre.AT, sre.ASSERT, sre.ASSERT_NOT)
# Past this spread a bounded repeat is given without its upper bound:
# counting is what makes an automaton large, and a wider one matches more.
_WIDEST_COUNT = 8
_CATEGORIES = {
    sre.CATEGORY_DIGIT: r"\d",
    sre.CATEGORY_NOT_DIGIT: r"\D",
    sre.CATEGORY_SPACE: r"\s",
    sre.CATEGORY_NOT_SPACE: r"\S",
    sre.CATEGORY_WORD: r"\w",
    sre.CATEGORY_NOT_WORD: r"\W",
}


def _category(category: int) -> frozenset[int]:
    """The ASCII characters Python's class takes, and every byte beyond."""
    pattern = re.compile(_CATEGORIES[category])
    return frozenset(b for b in _ASCII if pattern.match(chr(b))) | _BEYOND_ASCII


def _characters(codes, caseless: bool) -> set[int]:
    out: set[int] = set()
    for code in codes:
        char = chr(code)
        if code < 128:
            out.add(code)
            if caseless and char.isalpha():
                out |= {ord(char.lower()), ord(char.upper())}
                if char.lower() in _FOLDS.values():
                    out.add(_FOLDED)
        elif char in _FOLDS:
            out.add(_FOLDED)
            if caseless:
                out |= {ord(_FOLDS[char]), ord(_FOLDS[char].upper())}
        else:
            out |= _BEYOND_ASCII
    return out


def _class(items, caseless: bool) -> set[int]:
    negated = any(op is sre.NEGATE for op, _ in items)
    # A negated class is complemented from its members as written: without
    # their other cases it takes more, never less, than Python's.
    caseless = caseless and not negated
    out: set[int] = set()
    for op, value in items:
        if op is sre.LITERAL:
            out |= _characters([value], caseless)
        elif op is sre.RANGE:
            low, high = value
            out |= _characters(range(low, min(high, 127) + 1), caseless)
            if high > 127:
                out |= _BEYOND_ASCII
        elif op is sre.CATEGORY:
            out |= _category(value)
        elif op is not sre.NEGATE:
            raise ValueError(f"unsupported in a class: {op}")
    return set(_ASCII - out) | _BEYOND_ASCII if negated else out


def _bytes(members: set[int] | frozenset[int]) -> str:
    """A class of bytes, consecutive ones as a range."""
    ranges: list[list[int]] = []
    for byte in sorted(members):
        if ranges and byte == ranges[-1][1] + 1:
            ranges[-1][1] = byte
        else:
            ranges.append([byte, byte])
    spelt = "".join(
        f"\\x{low:02x}" if low == high else f"\\x{low:02x}-\\x{high:02x}" for low, high in ranges
    )
    return spelt if len(members) == 1 else f"[{spelt}]"


class _Necessary:
    """Writes a Python pattern's parse as a necessary pattern (see the module)."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.tree = sre_parse.parse(pattern.pattern, pattern.flags)
        self.caseless = bool(self.tree.state.flags & re.IGNORECASE)
        self.dotall = bool(self.tree.state.flags & re.DOTALL)
        self.groups: dict[int, str] = {}

    def expression(self) -> str:
        self._sequence(self.tree, self.caseless, self.dotall)  # every group's own pattern first
        return self._sequence(self.tree, self.caseless, self.dotall, opens=True, closes=True)

    def _sequence(self, items, caseless, dotall, *, opens=False, closes=False) -> str:
        items = [(op, value) for op, value in items if op not in _ZERO_WIDTH]
        while opens and items and items[0][0] in _REPEATS and items[0][1][0] == 0:
            items.pop(0)
        while closes and items and items[-1][0] in _REPEATS and items[-1][1][0] == 0:
            items.pop()
        parts = []
        for index, (op, value) in enumerate(items):
            first, last = opens and index == 0, closes and index == len(items) - 1
            part = self._item(op, value, caseless, dotall, first, last)
            if op is sre.SUBPATTERN and value[0] is not None and not (first or last):
                self.groups[value[0]] = part
            parts.append(part)
        return "".join(parts)

    def _item(self, op, value, caseless, dotall, opens, closes) -> str:
        if op is sre.LITERAL:
            return _bytes(_characters([value], caseless))
        if op is sre.NOT_LITERAL:
            return _bytes((_ASCII - {value}) | _BEYOND_ASCII)
        if op is sre.ANY:
            return _bytes((_ASCII if dotall else _ASCII - {10}) | _BEYOND_ASCII)
        if op is sre.IN:
            return _bytes(_class(value, caseless))
        if op is sre.CATEGORY:
            return _bytes(_category(value))
        if op is sre.BRANCH:
            branches = [
                self._sequence(branch, caseless, dotall, opens=opens, closes=closes)
                for branch in value[1]
            ]
            return "(?:" + "|".join(branches) + ")"
        if op is sre.SUBPATTERN:
            _group, added, removed, items = value
            caseless = (caseless or bool(added & re.IGNORECASE)) and not removed & re.IGNORECASE
            dotall = (dotall or bool(added & re.DOTALL)) and not removed & re.DOTALL
            inner = self._sequence(items, caseless, dotall, opens=opens, closes=closes)
            return f"(?:{inner})"
        if op in _REPEATS:
            low, high, items = value
            inner = self._sequence(items, caseless, dotall)
            if opens or closes:
                return f"(?:{inner}){{{low}}}"
            wide = high == sre.MAXREPEAT or high - low > _WIDEST_COUNT
            return f"(?:{inner}){{{low},{'' if wide else high}}}"
        if op is sre.GROUPREF:
            return f"(?:{self.groups[value]})"
        if op is sre.ATOMIC_GROUP:
            return f"(?:{self._sequence(value, caseless, dotall, opens=opens, closes=closes)})"
        raise ValueError(f"unsupported: {op}")


def necessary(pattern: re.Pattern[str]) -> bytes:
    """Hyperscan's expression for what every match of `pattern` holds."""
    return _Necessary(pattern).expression().encode("ascii")


def as_bytes(text: str) -> bytes:
    """One byte per character of `text`, as the necessary patterns read it."""
    if text.isascii():
        return text.encode("ascii")
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    data = np.minimum(codes, 255).astype(np.uint8)
    for char in _FOLDS:
        if char in text:
            data[codes == ord(char)] = _FOLDED
    return data.tobytes()


class Ends:
    """Where each gated pattern's necessary matches end in one text."""

    def __init__(self, ends: dict[str, list[int]], gated: frozenset[str]) -> None:
        self._ends, self._gated = ends, gated

    def anywhere(self, name: str) -> bool:
        """Whether pattern `name` may match somewhere in the text."""
        return name not in self._gated or name in self._ends

    def within(self, name: str, start: int, end: int) -> bool:
        """Whether pattern `name` may match inside text[start:end]."""
        if name not in self._gated:
            return True
        ends = self._ends.get(name, ())
        at = bisect_right(ends, start)
        return at < len(ends) and ends[at] <= end


# No pattern gated: every one is run everywhere its detector's own gate says.
EVERYWHERE = Ends({}, frozenset())


class MultiMatch:
    """The necessary patterns of named Python patterns, compiled together once.

    A pattern the conversion cannot write, or Hyperscan cannot compile,
    is left out: it is then run wherever its detector's gate says, as if
    there were no native pass.
    """

    def __init__(self, patterns: Mapping[str, re.Pattern[str]]) -> None:
        self._patterns = dict(patterns)
        self._lock = threading.Lock()
        self._local = threading.local()
        self._compiled: tuple[hyperscan.Database, list[str], frozenset[str]] | None = None

    def prepare(self) -> None:
        """Compile now instead of on the first scan, which would otherwise
        take the time (about a second for all the rules)."""
        self._compile()

    def _compile(self) -> tuple[hyperscan.Database, list[str], frozenset[str]]:
        with self._lock:
            if self._compiled is None:
                expressions = {}
                for name, pattern in self._patterns.items():
                    try:
                        expressions[name] = necessary(pattern)
                    except ValueError:
                        continue
                    if re.fullmatch(expressions[name].decode(), ""):
                        del expressions[name]  # it would end everywhere
                try:
                    database = _database(list(expressions.values()))
                except hyperscan.error:
                    expressions = {n: e for n, e in expressions.items() if _compiles(e)}
                    database = _database(list(expressions.values()))
                self._compiled = database, list(expressions), frozenset(expressions)
            return self._compiled

    def _scratch(self, database: hyperscan.Database) -> hyperscan.Scratch:
        """This thread's scratch space: a scan needs one no other scan uses."""
        if getattr(self._local, "database", None) is not database:
            self._local.database, self._local.scratch = database, hyperscan.Scratch(database)
        return self._local.scratch

    def scan(self, text: str) -> Ends:
        database, names, gated = self._compiled or self._compile()
        ends: dict[str, list[int]] = {}

        def found(index: int, _start: int, end: int, _flags: int, _context: object) -> None:
            ends.setdefault(names[index], []).append(end)

        database.scan(as_bytes(text), match_event_handler=found, scratch=self._scratch(database))
        for positions in ends.values():
            positions.sort()
        return Ends(ends, gated)


def _database(expressions: list[bytes]) -> hyperscan.Database:
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    # Prefiltering lets it widen what it cannot compile exactly: it may
    # report more ends, never fewer.
    database.compile(
        expressions=expressions,
        ids=list(range(len(expressions))),
        elements=len(expressions),
        flags=[hyperscan.HS_FLAG_PREFILTER] * len(expressions),
    )
    return database


def _compiles(expression: bytes) -> bool:
    try:
        _database([expression])
    except hyperscan.error:
        return False
    return True
