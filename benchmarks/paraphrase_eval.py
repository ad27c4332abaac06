"""Precision and recall of compaction's paraphrase test on the labelled pairs.

    .venv/bin/python benchmarks/paraphrase_eval.py

Embeds both sides of every pair in benchmarks/eval/paraphrases.py the way
a stored document is embedded (title = first line, then content), then
sweeps the cosine threshold and prints, for the rule compaction uses
(cosine, and no conflicting figures), the precision and recall at each
threshold, the old write-time rule for comparison, and the pairs the chosen
threshold gets wrong.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

import numpy as np  # noqa: E402

from benchmarks.eval.paraphrases import NEAR_TOPIC, PARAPHRASES  # noqa: E402
from benchmarks.harness import command_line  # noqa: E402
from memory_app.dreams.compact import PARAPHRASE_MIN, same_claim  # noqa: E402
from memory_app.embeddings import document_text, get_backend  # noqa: E402
from memory_app.services.dedup import COSINE_MIN, TOKEN_OVERLAP_MIN, token_overlap  # noqa: E402


def _vectors(texts: list[str]) -> dict[str, np.ndarray]:
    unique = sorted(set(texts))
    rows = get_backend().embed([document_text(t.splitlines()[0][:120], "", t) for t in unique])
    return dict(zip(unique, rows, strict=True))


def _scores(predicted: list[bool], labels: list[bool]) -> tuple[float, float]:
    tp = sum(p and y for p, y in zip(predicted, labels, strict=True))
    fp = sum(p and not y for p, y in zip(predicted, labels, strict=True))
    fn = sum(y and not p for p, y in zip(predicted, labels, strict=True))
    return tp / ((tp + fp) or 1), tp / ((tp + fn) or 1)


def main() -> None:
    command_line(__doc__).parse_args()
    pairs = [(a, b, True) for a, b in PARAPHRASES] + [(a, b, False) for a, b in NEAR_TOPIC]
    vectors = _vectors([t for a, b, _ in pairs for t in (a, b)])
    cosines = [float(vectors[a] @ vectors[b]) for a, b, _ in pairs]
    labels = [label for _, _, label in pairs]
    print(f"{len(PARAPHRASES)} paraphrase pairs, {len(NEAR_TOPIC)} near-topic pairs\n")
    old = [
        c >= COSINE_MIN and token_overlap(a, b) >= TOKEN_OVERLAP_MIN
        for c, (a, b, _) in zip(cosines, pairs, strict=True)
    ]
    precision, recall = _scores(old, labels)
    print(f"write-time dedup rule: precision {precision:.2f} recall {recall:.2f}\n")
    print("threshold  cosine alone P / R   cosine and same figures P / R")
    for threshold in np.arange(0.50, 0.92, 0.02):
        alone = [c >= threshold for c in cosines]
        guarded = [
            c >= threshold and same_claim(a, b) for c, (a, b, _) in zip(cosines, pairs, strict=True)
        ]
        (p1, r1), (p2, r2) = _scores(alone, labels), _scores(guarded, labels)
        mark = "  <- PARAPHRASE_MIN" if abs(threshold - PARAPHRASE_MIN) < 1e-6 else ""
        print(f"  {threshold:.2f}       {p1:.2f} / {r1:.2f}            {p2:.2f} / {r2:.2f}{mark}")
    print(f"\nmistakes at {PARAPHRASE_MIN}:")
    for c, (a, b, label) in zip(cosines, pairs, strict=True):
        if (c >= PARAPHRASE_MIN and same_claim(a, b)) != label:
            kind = "missed paraphrase" if label else "false merge"
            print(f"  {kind} (cosine {c:.2f}): {a[:60]!r} / {b[:60]!r}")


if __name__ == "__main__":
    main()
