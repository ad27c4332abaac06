"""A small learned detector for prompt injection, in pure Python.

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
field in about a millisecond. Long text is scored in overlapping windows
and the highest window counts, so an injection buried in a long note is
not diluted by the note around it.
"""

import json
import math
import re
from functools import cache
from itertools import islice, pairwise, repeat
from pathlib import Path

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


def _best_window(words: list[str], weights: dict[str, float], bias: float) -> tuple[float, int]:
    """The highest-scoring window and where it starts.

    A window's score is the bias plus its features' weights over the square
    root of their number, as in training; each bigram is built once for the
    whole text rather than once per window.
    """
    bigrams = [f"{a} {b}" for a, b in pairwise(words)]
    best, best_start = -math.inf, 0
    for start in windows(len(words)):
        found = set(words[start : start + WINDOW_WORDS])
        found.update(bigrams[start : start + WINDOW_WORDS - 1])
        if not found:
            continue
        score = bias + sum(map(weights.get, found, repeat(0.0))) / math.sqrt(len(found))
        if score > best:
            best, best_start = score, start
    return best, best_start


def words_of(lowered: str) -> list[str]:
    """The words the model reads, of text already lowered."""
    return _WORD.findall(lowered)


def classifier_spans(text: str, words: list[str] | None = None) -> list[Span]:
    """The best window of `text` if it scores over the threshold.

    `words` are `words_of(text.lower())` when the caller has them already.
    """
    weights, bias, threshold = model()
    if words is None:
        words = words_of(text.lower())
    if len(words) < MIN_WORDS:
        return []
    best, best_start = _best_window(words, weights, bias)
    if best < threshold:
        return []
    # Positions, only for the rare text that is flagged, and only up to the
    # window's last word.
    last = min(best_start + WINDOW_WORDS, len(words)) - 1
    tokens = list(islice(_WORD.finditer(text.lower()), last + 1))
    return [Span("prompt_injection.classifier", tokens[best_start].start(), tokens[last].end())]
