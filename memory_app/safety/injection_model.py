"""A small learned detector for prompt injection, in Python and numpy.

Rules name the known phrasings; attacks reworded past them are still
recognisable by their vocabulary as a whole ("you are now", "no
restrictions", "password", "reveal", "hypothetical"). This is a logistic
regression over word unigrams and bigrams, trained by
`benchmarks/train_injection.py` on the public development sets and our
own corpus; its weights and threshold live in `injection_model.json`
beside this file, and the script reproduces them.

It is an equally light stand-in for a classifier over the document
embedding: the embedding costs 40-130 ms per text on one core, which the
scanner's 5 ms budget cannot hold, while this scores a 20,000-character
field in well under a millisecond. Long text is scored in overlapping windows
and the highest window counts, so an injection buried in a long note is
not diluted by the note around it.
"""

import json
import math
import re
from collections.abc import Iterable
from functools import cache
from itertools import islice, pairwise, repeat
from pathlib import Path

import numpy as np

from memory_app.safety.types import Span

MODEL_PATH = Path(__file__).resolve().parent / "injection_model.json"
# Below this many words there is no wording as a whole to judge, only a
# keyword or two ("password: changeme"); the rules speak for such text.
MIN_WORDS = 6
WINDOW_WORDS = 128
STRIDE_WORDS = 64

_WORD = re.compile(r"\w+")


def features(words: list[str]) -> set[str]:
    """Unigrams and bigrams, present or not (counts add nothing here)."""
    return set(words) | {f"{a} {b}" for a, b in pairwise(words)}


def tokenize(text: str) -> list[re.Match[str]]:
    return list(_WORD.finditer(text.lower()))


@cache
def model() -> tuple[dict[str, float], float, float]:
    data = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
    return data["weights"], data["bias"], data["threshold"]


def windows(count: int) -> list[int]:
    """Window starts covering every word, the last window flush with the end."""
    last = max(count - WINDOW_WORDS, 0)
    starts = list(range(0, last + 1, STRIDE_WORDS))
    return starts if starts[-1] == last else [*starts, last]


def _best_window(words: list[str]) -> tuple[float, int]:
    """The highest-scoring window and where it starts.

    A window's score is the bias plus its features' weights over the square
    root of their number, as in training.
    """
    weights, bias, _ = model()
    if len(words) > WINDOW_WORDS:
        return _best_of_windows(words, bias)
    found = features(words)  # one window
    return bias + sum(map(weights.get, found, repeat(0.0))) / math.sqrt(len(found)), 0


# A long text is scored in all its windows at once, with numpy: building a
# set of some 250 features per window and looking each up cost a
# millisecond on a 20,000-character note. Features are looked up by hash
# (a bigram's mixed from its two words' hashes, so no bigram string is
# built); two features sharing a 64-bit hash is a chance of about one in
# 10^15 per note. A feature counts once in a window: at its first
# occurrence there, found by where it last occurred before.
_MIX = np.uint64(0x9E3779B97F4A7C15)


def _pair_keys(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    return first * _MIX ^ second


def _hashes(words: Iterable[str], count: int) -> np.ndarray:
    return np.fromiter(map(hash, words), dtype=np.int64, count=count).view(np.uint64)


@cache
def _hashed_model() -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """(keys, weights) of the unigrams and of the bigrams, sorted by key."""
    weights, _, _ = model()
    unigrams = {f: w for f, w in weights.items() if " " not in f}
    bigrams = [(f.split(" "), w) for f, w in weights.items() if " " in f]
    tables = []
    for keys, values in (
        (_hashes(unigrams, len(unigrams)), list(unigrams.values())),
        (
            _pair_keys(
                _hashes((pair[0] for pair, _ in bigrams), len(bigrams)),
                _hashes((pair[1] for pair, _ in bigrams), len(bigrams)),
            ),
            [w for _, w in bigrams],
        ),
    ):
        order = np.argsort(keys)
        tables.append((keys[order], np.array(values, dtype=np.float64)[order]))
    return tables[0], tables[1]


def _weights_of(keys: np.ndarray, table: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    known, weights = table
    at = np.minimum(np.searchsorted(known, keys), len(known) - 1)
    return np.where(known[at] == keys, weights[at], 0.0)


def _previous(keys: np.ndarray) -> np.ndarray:
    """For each position, the last earlier position of the same key, or -1.

    The keys are ranked first: a stable sort of small integers is a radix
    sort, twice as fast as the stable sort of the 64-bit keys themselves.
    The ranks are `np.unique`'s inverse, made here without its checks and
    copies (a quarter of this step's time).
    """
    order = np.argsort(keys)
    ordered = keys[order]
    new = np.empty(len(keys), dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    small = len(keys) <= np.iinfo(np.int16).max
    ranks = np.empty(len(keys), dtype=np.int16 if small else np.int64)
    ranks[order] = np.cumsum(new) - 1
    order = np.argsort(ranks, kind="stable")
    same = ranks[order][1:] == ranks[order][:-1]
    previous = np.full(len(keys), -1, dtype=np.int64)
    previous[order[1:][same]] = order[:-1][same]
    return previous


def _window_sums(
    keys: np.ndarray, weights: np.ndarray, starts: np.ndarray, width: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per window: the weight of its distinct features, and their number."""
    at = starts[:, None] + np.arange(width)
    inside = at < len(keys)
    at = np.minimum(at, len(keys) - 1)
    first = inside & (_previous(keys)[at] < starts[:, None])
    return np.where(first, weights[at], 0.0).sum(axis=1), first.sum(axis=1)


def _best_of_windows(words: list[str], bias: float) -> tuple[float, int]:
    unigrams, bigrams = _hashed_model()
    keys = _hashes(words, len(words))
    pairs = _pair_keys(keys[:-1], keys[1:])
    starts = np.array(windows(len(words)))
    weight, count = _window_sums(keys, _weights_of(keys, unigrams), starts, WINDOW_WORDS)
    pair_weight, pair_count = _window_sums(
        pairs, _weights_of(pairs, bigrams), starts, WINDOW_WORDS - 1
    )
    scores = bias + (weight + pair_weight) / np.sqrt(count + pair_count)
    best = int(np.argmax(scores))
    return float(scores[best]), int(starts[best])


# Keeps the ASCII word characters (`\w`'s [A-Za-z0-9_]); spaces the rest.
_SPLIT_WORDS = bytes(
    byte if byte < 128 and (chr(byte).isalnum() or byte == ord("_")) else ord(" ")
    for byte in range(256)
)
# A character that `\w` matches and ASCII does not hold (é, ß, 中). The
# range comes first: most characters are ASCII and are then passed over
# without a Unicode lookup: 0.06 ms instead of 0.22 on a long note.
_NON_ASCII_WORD = re.compile(r"[^\x00-\x7f\W]")


def words_of(lowered: str) -> list[str]:
    r"""The words the model reads, of text already lowered.

    The `\w+` runs of the text. When its words are all ASCII they are
    found by bytes: every other character (one "?" each, once encoded)
    becomes a space and the text is split, three times as fast as the
    pattern, which makes a string object per match.
    """
    if not lowered.isascii() and _NON_ASCII_WORD.search(lowered):
        return _WORD.findall(lowered)
    return lowered.encode("ascii", "replace").translate(_SPLIT_WORDS).decode("ascii").split()


def classifier_spans(text: str, words: list[str] | None = None) -> list[Span]:
    """The best window of `text` if it scores over the threshold.

    `words` are `words_of(text.lower())` when the caller has them already.
    """
    if words is None:
        words = words_of(text.lower())
    if len(words) < MIN_WORDS:
        return []
    best, best_start = _best_window(words)
    if best < model()[2]:
        return []
    last = min(best_start + WINDOW_WORDS, len(words)) - 1
    start, end = _word_span(text.lower(), best_start, last)
    return [Span("prompt_injection.classifier", start, end)]


# Skips a stride of words at once, inside the regex engine.
_STRIDE = re.compile(rf"(?:\W*\w+){{{STRIDE_WORDS}}}")


def _word_span(lowered: str, first: int, last: int) -> tuple[int, int]:
    """Where word `first` starts and word `last` ends (counting from 0).

    Only for a flagged text: the words before the window are skipped a
    stride at a time rather than each made a match of its own. (A greedy
    word pattern takes whole words; the words exist, so nothing backtracks.)
    """
    position = 0
    for _ in range(first // STRIDE_WORDS):
        position = _STRIDE.match(lowered, position).end()
    skip = first % STRIDE_WORDS
    tokens = list(islice(_WORD.finditer(lowered, position), skip, skip + last - first + 1))
    return tokens[0].start(), tokens[-1].end()
