"""Side-by-side line diffs for the review pages, as data (the template escapes)."""

import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class DiffRow:
    kind: str  # same | changed | added | removed
    old: str
    new: str


def side_by_side(old: str, new: str) -> list[DiffRow]:
    old_lines, new_lines = old.splitlines(), new.splitlines()
    rows: list[DiffRow] = []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        left, right = old_lines[i1:i2], new_lines[j1:j2]
        if tag == "equal":
            rows += [DiffRow("same", a, b) for a, b in zip(left, right, strict=True)]
            continue
        for index in range(max(len(left), len(right))):
            a = left[index] if index < len(left) else ""
            b = right[index] if index < len(right) else ""
            kind = "changed" if a and b else ("removed" if a else "added")
            rows.append(DiffRow(kind, a, b))
    return rows
