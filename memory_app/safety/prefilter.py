"""What the gated rules wait on, found once per text for every detector.

Most rules cannot match without a word of their own in the text: a secret
word or "://" for the credential shapes, "ignore" and "instructions" for
an injection phrase. Each detector module registers those words here when
it is imported; a text is then searched for all of them at once, with one
Aho-Corasick pass over its lower case, instead of one `str.find` loop per
word (there are some two hundred). The detectors run their rules only
around the places this reports.

Likewise the runs of token characters (16 or more of base64's alphabet)
are found once: the decoding pass, the entropy rule and the token-shaped
credential rules all look inside those runs only.

A scan is kept for the last few texts, so the detectors of one field
share it.
"""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np
from ahocorasick_rs import AhoCorasick, Implementation

# Every character of a base64, base64url or hex run, and of a token
# ([A-Za-z0-9+/=_-]), and how many make a run.
TOKEN_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-"
MIN_TOKEN_RUN = 16
_TOKEN_MARKS = bytes(ord("a") if byte in TOKEN_CHARS else ord(" ") for byte in range(256))
_SHORTEST_RUN = b"a" * MIN_TOKEN_RUN

_words: list[str] = []


def register(words: Iterable[str]) -> None:
    """Add words (lower case) that `scan` reports from now on."""
    new = [word for word in dict.fromkeys(words) if word not in _words]
    if new:
        _words.extend(new)
        _automaton.cache_clear()
        scan.cache_clear()


def words() -> tuple[str, ...]:
    """Every word registered so far: what the gated rules wait on."""
    return tuple(_words)


@lru_cache(maxsize=1)
def _automaton() -> tuple[AhoCorasick, tuple[str, ...]]:
    # A DFA searches twice as fast as the default NFA (0.11 against 0.21 ms
    # on a 20,000-character note) and costs under a millisecond to build,
    # once per process: the words are few.
    return AhoCorasick(_words, implementation=Implementation.DFA), tuple(_words)


def line_starts(text: str) -> list[int]:
    """Where each line of `text` starts: 0, and after each line break.

    The breaks are found by numpy in the text's bytes (a character outside
    ASCII is one "?", so positions hold), twice as fast as splitting.
    """
    breaks = np.flatnonzero(np.frombuffer(text.encode("ascii", "replace"), dtype=np.uint8) == 10)
    return [0, *(breaks + 1).tolist()]


@dataclass(frozen=True)
class Scanned:
    text: str
    lowered: str
    hits: dict[str, list[int]]  # word -> where it starts in `lowered`, ascending

    @property
    def exact(self) -> bool:
        """Whether positions in `lowered` are the text's.

        Not when lower-casing changed the length ("İ" becomes two characters).
        """
        return len(self.lowered) == len(self.text)

    def at(self, words: Iterable[str]) -> list[tuple[int, int]]:
        """(start, end) of every occurrence of any of `words`, sorted."""
        return sorted(
            (start, start + len(word)) for word in words for start in self.hits.get(word, ())
        )

    @cached_property
    def line_starts(self) -> list[int]:
        """Where each line of `lowered` starts."""
        return line_starts(self.lowered)

    @cached_property
    def token_runs(self) -> list[tuple[int, int]]:
        """(start, end) of each maximal run of `MIN_TOKEN_RUN` or more `TOKEN_CHARS`.

        Found in bytes where every token character is "a" and every other
        one a space (a character outside ASCII is one "?", so positions
        hold): a run is then where 16 "a"s are, found by a substring
        search that skips ahead, not by a pattern tried at every position
        of every word, which cost three times as much.
        """
        marks = self.text.encode("ascii", "replace").translate(_TOKEN_MARKS)
        runs, at = [], marks.find(_SHORTEST_RUN)
        while at != -1:
            start = marks.rfind(b" ", 0, at) + 1
            end = marks.find(b" ", at)
            end = len(marks) if end == -1 else end
            runs.append((start, end))
            at = marks.find(_SHORTEST_RUN, end)
        return runs


@lru_cache(maxsize=8)
def scan(text: str) -> Scanned:
    automaton, names = _automaton()
    lowered = text.lower()
    hits: defaultdict[str, list[int]] = defaultdict(list)
    for index, start, _end in automaton.find_matches_as_indexes(lowered, overlapping=True):
        hits[names[index]].append(start)
    return Scanned(text, lowered, dict(hits))
