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

import operator
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import accumulate, count

from ahocorasick_rs import AhoCorasick, Implementation

# Every character of a base64, base64url or hex run, and of a token.
TOKEN_RUN = re.compile(r"[A-Za-z0-9+/=_-]{16,}")

_words: list[str] = []


def register(words: Iterable[str]) -> None:
    """Add words (lower case) that `scan` reports from now on."""
    new = [word for word in dict.fromkeys(words) if word not in _words]
    if new:
        _words.extend(new)
        _automaton.cache_clear()
        scan.cache_clear()


@lru_cache(maxsize=1)
def _automaton() -> tuple[AhoCorasick, tuple[str, ...]]:
    # A DFA searches twice as fast as the default NFA (0.11 against 0.21 ms
    # on a 20,000-character note) and costs under a millisecond to build,
    # once per process: the words are few.
    return AhoCorasick(_words, implementation=Implementation.DFA), tuple(_words)


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
        lines = self.lowered.split("\n")
        # Line i starts after the lengths of the lines before it and i breaks.
        return [0, *map(operator.add, accumulate(map(len, lines[:-1])), count(1))]

    @cached_property
    def token_runs(self) -> list[tuple[int, int]]:
        """(start, end) of each maximal run of `TOKEN_RUN` characters in the text."""
        return [match.span() for match in TOKEN_RUN.finditer(self.text)]


@lru_cache(maxsize=8)
def scan(text: str) -> Scanned:
    automaton, names = _automaton()
    lowered = text.lower()
    hits: defaultdict[str, list[int]] = defaultdict(list)
    for index, start, _end in automaton.find_matches_as_indexes(lowered, overlapping=True):
        hits[names[index]].append(start)
    return Scanned(text, lowered, dict(hits))
