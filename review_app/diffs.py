"""Line diffs for the review pages, as data the templates lay out unified or split.

A reviewer decides on what changed, so changed lines carry the changed words
(difflib on word tokens), both sides carry line numbers, and long unchanged
runs fold down to a few lines of context. Memory content is untrusted: every
piece of text reaches HTML through `format_html` or `escape`; the only
strings marked safe are fixed markup and joins of their results.
"""

import difflib
import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import groupby

from django.utils.html import escape, format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

# Words, runs of spaces, and single punctuation marks: "retries=3" changing to
# "retries=5" marks only the 3 and the 5.
_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")
# Unchanged lines kept on each side of a change; longer runs fold.
CONTEXT = 3
# Below this similarity two paired lines are a rewrite, not an edit: marking
# words would mark nearly all of them, so the line colour alone says it.
_SIMILAR = 0.4


# Characters that draw nothing, or that reorder what follows them: zero-width
# spaces and joiners, soft hyphens, bidi marks, embeddings, overrides and
# isolates. "pay\u200bments-api" read as "payments-api", so a reviewer
# approved a name that matches nothing; each is shown as a marker instead.
# Variation selectors stay: they only pick an emoji's presentation.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufeff\uffa0]"
)


def shown(text: str) -> SafeString:
    """The text escaped, with each invisible character as a visible
    `⟨U+200B⟩` marker named in its title."""
    if text.isascii() or not _INVISIBLE.search(text):
        return escape(text)
    pieces, start = [], 0
    for match in _INVISIBLE.finditer(text):
        pieces += [escape(text[start : match.start()]), _marker(match.group())]
        start = match.end()
    pieces.append(escape(text[start:]))
    return _join(pieces)


@lru_cache(maxsize=64)
def _marker(char: str) -> SafeString:
    code = f"U+{ord(char):04X}"
    return format_html(
        '<span class="invisible-char" title="{}">⟨{}⟩</span>',
        unicodedata.name(char, code).lower(),
        code,
    )


@dataclass(frozen=True)
class Segment:
    text: str
    changed: bool


@dataclass(frozen=True)
class Side:
    """One line on one side of the diff, with its 1-based line number."""

    number: int
    segments: tuple[Segment, ...]

    @property
    def text(self) -> str:
        return "".join(segment.text for segment in self.segments)

    @property
    def html(self) -> SafeString:
        return format_html_join(
            "",
            "{}",
            (
                (format_html("<mark>{}</mark>", shown(s.text)) if s.changed else shown(s.text),)
                for s in self.segments
            ),
        )


@dataclass(frozen=True)
class Row:
    """A row of the split view. `kind` is same, changed, added, removed or
    fold; a fold row stands for `folded` unchanged lines and has no sides."""

    kind: str
    old: Side | None = None
    new: Side | None = None
    folded: int = 0


@dataclass(frozen=True)
class UnifiedLine:
    kind: str  # same | added | removed | fold
    old: int | None
    new: int | None
    side: Side | None
    folded: int = 0

    @property
    def sign(self) -> str:
        return {"added": "+", "removed": "-"}.get(self.kind, "")


@dataclass(frozen=True)
class Diff:
    rows: tuple[Row, ...]
    is_new: bool
    added: int
    removed: int

    @property
    def unchanged(self) -> bool:
        return self.added == 0 and self.removed == 0

    @cached_property
    def unified(self) -> list[UnifiedLine]:
        """The rows as one column: each run of changes shows its removed
        lines, then its added lines, as `diff -u` does."""
        lines: list[UnifiedLine] = []
        for is_change, group in groupby(self.rows, key=lambda r: r.kind in _CHANGES):
            rows = list(group)
            if not is_change:
                lines += [_unchanged_line(row) for row in rows]
                continue
            lines += [UnifiedLine("removed", r.old.number, None, r.old) for r in rows if r.old]
            lines += [UnifiedLine("added", None, r.new.number, r.new) for r in rows if r.new]
        return lines

    # The table bodies are built here rather than in a template loop: a
    # queue page holds 25 diffs, and a loop of template tags per row would be
    # most of its render time. Every cell still goes through format_html.
    # Cached per Diff, like the Diff itself (see build_diff).

    @cached_property
    def new_file_html(self) -> SafeString:
        return format_html_join(
            "",
            '<tr class="added"><td class="num">{}</td><td class="sign">+</td>'
            '<td class="code">{}</td></tr>',
            ((row.new.number, row.new.html) for row in self.rows),
        )

    @cached_property
    def unified_html(self) -> SafeString:
        return _join(
            _fold_html(line.folded, 4)
            if line.kind == "fold"
            else format_html(
                '<tr class="{}"><td class="num">{}</td><td class="num">{}</td>'
                '<td class="sign">{}</td><td class="code">{}</td></tr>',
                line.kind,
                "" if line.old is None else line.old,
                "" if line.new is None else line.new,
                line.sign,
                line.side.html,
            )
            for line in self.unified
        )

    @cached_property
    def split_html(self) -> SafeString:
        return _join(
            _fold_html(row.folded, 6)
            if row.kind == "fold"
            else format_html(
                '<tr class="{}">{}{}</tr>',
                row.kind,
                _half(row.old, "old", "-" if row.kind != "same" else ""),
                _half(row.new, "new", "+" if row.kind != "same" else ""),
            )
            for row in self.rows
        )


_CHANGES = {"changed", "added", "removed"}
_BLANK_HALF = mark_safe(
    '<td class="num blank"></td><td class="sign blank"></td><td class="code blank"></td>'
)


def _join(parts) -> SafeString:
    return mark_safe("".join(parts))  # noqa: S308 - each part is escaped or format_html's


def _half(side: Side | None, which: str, sign: str) -> SafeString:
    if side is None:
        return _BLANK_HALF
    return format_html(
        '<td class="num {}">{}</td><td class="sign {}">{}</td><td class="code {}">{}</td>',
        which,
        side.number,
        which,
        sign,
        which,
        side.html,
    )


def _fold_html(folded: int, columns: int) -> SafeString:
    return format_html(
        '<tr class="fold"><td colspan="{}">{} unchanged line{}</td></tr>',
        columns,
        folded,
        "" if folded == 1 else "s",
    )


def _unchanged_line(row: Row) -> UnifiedLine:
    if row.kind == "fold":
        return UnifiedLine("fold", None, None, None, row.folded)
    return UnifiedLine("same", row.old.number, row.new.number, row.old)


@lru_cache(maxsize=256)
def build_diff(old: str | None, new: str) -> Diff:
    """The diff from `old` to `new`; `old=None` means there was no previous
    version, so the result is a new file: every line added, nothing to pair.

    Cached, with its HTML, because a reviewer reloads the same queue page
    over and over; a Diff never changes once built."""
    new_lines = new.splitlines()
    if old is None:
        rows = tuple(Row("added", new=_plain(n, line)) for n, line in enumerate(new_lines, 1))
        return Diff(rows=rows, is_new=True, added=len(rows), removed=0)
    old_lines = old.splitlines()
    rows: list[Row] = []
    added = removed = 0
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    opcodes = matcher.get_opcodes()
    for index, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag == "equal":
            rows += _context(
                i1, j1, old_lines[i1:i2], first=index == 0, last=index == len(opcodes) - 1
            )
            continue
        removed, added = removed + (i2 - i1), added + (j2 - j1)
        for a, b in align(old_lines[i1:i2], new_lines[j1:j2]):
            rows.append(
                _pair(
                    i1 + (a or 0) + 1,
                    None if a is None else old_lines[i1 + a],
                    j1 + (b or 0) + 1,
                    None if b is None else new_lines[j1 + b],
                )
            )
    return Diff(rows=tuple(rows), is_new=False, added=added, removed=removed)


def _context(i: int, j: int, lines: list[str], *, first: bool, last: bool) -> list[Row]:
    """Unchanged lines: all of a short run, CONTEXT lines next to each change
    of a long one, and a fold row for the rest. With no change at all there
    is nothing to show."""
    if first and last:
        return []
    keep_head = 0 if first else CONTEXT
    keep_tail = 0 if last else CONTEXT
    same = [Row("same", _plain(i + k + 1, t), _plain(j + k + 1, t)) for k, t in enumerate(lines)]
    if len(lines) <= keep_head + keep_tail + 1:
        return same
    hidden = len(lines) - keep_head - keep_tail
    return [*same[:keep_head], Row("fold", folded=hidden), *same[len(same) - keep_tail :]]


def _plain(number: int, text: str) -> Side:
    return Side(number, (Segment(text, False),))


def align(old: list[str], new: list[str]) -> list[tuple[int | None, int | None]]:
    """Which line of a changed block became which: (old index, new index)
    pairs in order, None where a line has no partner.

    Pairing by position alone would set a step inserted at the top of a
    list beside the old first step, and every step after it beside its
    predecessor, all "rewritten". Each old line is paired instead with the
    most similar new line after the last pair (the first of equals), if
    similar enough; the lines skipped on the way are added or removed.
    Unpaired runs that meet are then set side by side again, as rewrites.
    Large blocks keep pairing by position: this is quadratic.
    """
    if len(old) * len(new) > _ALIGN_LIMIT:
        return _by_position(range(len(old)), range(len(new)))
    words_new = [_words(line) for line in new]
    pairs: list[tuple[int | None, int | None]] = []
    lost: list[int] = []
    j = 0
    for i, line in enumerate(old):
        words = _words(line)
        scores = [(_ratio(words, words_new[k]), -k) for k in range(j, len(new))]
        best = max(scores, default=(0.0, 0))
        match = -best[1] if best[0] >= _SIMILAR else None
        if match is None:
            lost.append(i)
            continue
        pairs += _by_position(lost, range(j, match))
        pairs.append((i, match))
        lost, j = [], match + 1
    return pairs + _by_position(lost, range(j, len(new)))


_ALIGN_LIMIT = 400


def _by_position(old, new) -> list[tuple[int | None, int | None]]:
    old, new = list(old), list(new)
    return [
        (old[n] if n < len(old) else None, new[n] if n < len(new) else None)
        for n in range(max(len(old), len(new)))
    ]


def _pair(old_no: int, old: str | None, new_no: int, new: str | None) -> Row:
    if old is None:
        return Row("added", new=_plain(new_no, new))
    if new is None:
        return Row("removed", old=_plain(old_no, old))
    left, right = word_segments(old, new)
    return Row("changed", Side(old_no, left), Side(new_no, right))


def word_segments(old: str, new: str) -> tuple[tuple[Segment, ...], tuple[Segment, ...]]:
    """Both lines cut into runs of unchanged and changed tokens."""
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    if _similarity(a, b) < _SIMILAR:
        return (Segment(old, False),), (Segment(new, False),)
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    left: list[Segment] = []
    right: list[Segment] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        changed = tag != "equal"
        _extend(left, "".join(a[i1:i2]), changed)
        _extend(right, "".join(b[j1:j2]), changed)
    return tuple(left), tuple(right)


def _similarity(a: list[str], b: list[str]) -> float:
    """Share of words in common; the spaces between words say nothing."""
    return _ratio([t for t in a if not t.isspace()], [t for t in b if not t.isspace()])


def _words(line: str) -> list[str]:
    return [t for t in _TOKEN.findall(line) if not t.isspace()]


def _ratio(a: list[str], b: list[str]) -> float:
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    return matcher.ratio() if matcher.quick_ratio() >= _SIMILAR else 0.0


def _extend(segments: list[Segment], text: str, changed: bool) -> None:
    if not text:
        return
    if segments and segments[-1].changed == changed:
        segments[-1] = Segment(segments[-1].text + text, changed)
    else:
        segments.append(Segment(text, changed))
