"""Train the prompt-injection classifier and choose its threshold.

    .venv/bin/python benchmarks/train_injection.py [--corpora DIR] [--check]

Data: `injection.jsonl` of the public development sets (GPL-licensed
sources are left out, so the weights carry no copyleft text), the ordinary
engineering text of `secrets.jsonl` and `logs.jsonl` and the companion
chat turns of `retrieval/memories.jsonl` (MIT) as more benign examples,
and the injection and benign samples of our own corpus. Without the chat
turns the model took a companion's "User: …\nAssistant: …" small talk for
injection (the attacks address the assistant; so does chat).

The threshold is chosen on held-out folds, never on data the model saw:
five folds, each scored by a model trained on the other four; they are
stratified by label, except that a chat user's turns stay in one fold
(turns of one user share names and phrasing, so splitting them would let
a model see a held-out turn's twin);
the threshold is the out-of-fold score above which 1% of the benign texts
other than chat turns fall (half the 2% budget, as the rules add their
own). The script prints the
out-of-fold recall and false-positive rate per kind at that threshold,
then trains on everything and writes `memory_app/safety/injection_model.json`.
`--check` retrains and fails if the committed file differs.
"""

import argparse
import json
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.scanner_eval import DEFAULT_CORPORA  # noqa: E402
from memory_app.safety.injection_model import (  # noqa: E402
    MIN_WORDS,
    MODEL_PATH,
    features,
    tokenize,
    words_of,
)
from memory_app.safety.normalize import normalize  # noqa: E402
from tests.memory_app.safety.corpus import build_corpus  # noqa: E402

SEED = 20261124
FOLDS = 5
TARGET_FPR = 0.01
MIN_DOCUMENT_FREQUENCY = 2
MAX_FEATURES = 6000
L2 = 1e-3
STEPS = 400
LEARNING_RATE = 0.05
EXCLUDED_SOURCES = ("utkusen/promptmap",)  # GPL-3.0
# The speaker labels of a transcript ("User: …\nAssistant: …") say who
# spoke, not what was asked: with weight they would make every chat
# transcript suspect, or, learned from benign chat, let an attack pass by
# putting "User:" before it. No feature holding one gets a weight.
ROLE_WORDS = frozenset({"user", "assistant"})
# Likewise the word "password" says what a text is about, not what it asks.
# The public injections ask an assistant for the password its system prompt
# holds, so learned from them it weighed like "ignore", and sign-in help
# ("Your password must contain at least 12 characters") read as an attack;
# asking for a password is the `credential_request` rule's to judge.
CREDENTIAL_WORDS = frozenset({"password", "passwords", "passphrase", "passcode"})
UNWEIGHTED_WORDS = ROLE_WORDS | CREDENTIAL_WORDS
CHAT_KIND = "benign_chat_turn"
BENIGN_KINDS_FROM_OTHER_SETS = {
    "prose_mentions_credentials",
    "prose_engineering_note",
    "markdown_doc_short",
    "markdown_doc_long",
}


def load(corpora: Path) -> list[tuple[str, int, str, str]]:
    """(text, label, kind, group) rows; group keeps related texts in one fold ("" for none)."""
    rows = []
    for name in ("injection", "secrets", "logs"):
        with open(corpora / f"{name}.jsonl", encoding="utf-8") as lines:
            for line in lines:
                row = json.loads(line)
                if row["source"].startswith(EXCLUDED_SOURCES):
                    continue
                if name == "injection":
                    rows.append((row["text"], int(row["label"] == "positive"), row["kind"], ""))
                elif row["label"] == "negative" and row["kind"] in BENIGN_KINDS_FROM_OTHER_SETS:
                    rows.append((row["text"], 0, f"benign_{row['kind']}", ""))
    with open(corpora / "retrieval" / "memories.jsonl", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            rows.append((row["text"], 0, CHAT_KIND, f"chat:{row['user']}"))
    for sample in build_corpus():
        if sample.family == "injection":
            rows.append((sample.text, 1, "own_injection", ""))
        elif not sample.positive:
            rows.append((sample.text, 0, f"own_{sample.kind}", ""))
    return rows


def feature_sets(rows) -> list[set[str]]:
    return [features([t.group() for t in tokenize(normalize(text))]) for text, *_ in rows]


def vocabulary(sets: list[set[str]]) -> list[str]:
    """The most frequent features, none holding a word of UNWEIGHTED_WORDS."""
    frequency = Counter(f for found in sets for f in found)
    kept = [
        f
        for f, n in frequency.items()
        if n >= MIN_DOCUMENT_FREQUENCY and UNWEIGHTED_WORDS.isdisjoint(f.split(" "))
    ]
    return sorted(kept, key=lambda f: (-frequency[f], f))[:MAX_FEATURES]


def matrix(sets: list[set[str]], vocab: list[str]) -> np.ndarray:
    index = {f: i for i, f in enumerate(vocab)}
    x = np.zeros((len(sets), len(vocab)), dtype=np.float64)
    for row, found in enumerate(sets):
        columns = [index[f] for f in found if f in index]
        if found:
            x[row, columns] = 1.0 / np.sqrt(len(found))
    return x


def fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Class-balanced logistic regression, full-batch Adam."""
    weight = np.where(y == 1, 0.5 / y.mean(), 0.5 / (1 - y.mean()))
    w, b = np.zeros(x.shape[1]), 0.0
    m, v, mb, vb = np.zeros_like(w), np.zeros_like(w), 0.0, 0.0
    for step in range(1, STEPS + 1):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        error = (p - y) * weight / len(y)
        gw, gb = x.T @ error + L2 * w, error.sum()
        m, v = 0.9 * m + 0.1 * gw, 0.999 * v + 0.001 * gw**2
        mb, vb = 0.9 * mb + 0.1 * gb, 0.999 * vb + 0.001 * gb**2
        w -= LEARNING_RATE * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
        b -= LEARNING_RATE * (mb / (1 - 0.9**step)) / (np.sqrt(vb / (1 - 0.999**step)) + 1e-8)
    return w, b


def folds(rows) -> list[int]:
    """Each row's fold: stratified by label, a group's rows together."""
    rng = random.Random(SEED)
    assignment = [0] * len(rows)
    for label in (0, 1):
        members = [i for i, (_, y, _, group) in enumerate(rows) if y == label and not group]
        rng.shuffle(members)
        for position, i in enumerate(members):
            assignment[i] = position % FOLDS
    groups = sorted({group for *_, group in rows if group})
    rng.shuffle(groups)
    fold_of = {group: position % FOLDS for position, group in enumerate(groups)}
    for i, (*_, group) in enumerate(rows):
        if group:
            assignment[i] = fold_of[group]
    return assignment


def out_of_fold_scores(rows, sets) -> np.ndarray:
    labels = [y for _, y, *_ in rows]
    assignment = folds(rows)
    scores = np.zeros(len(rows))
    for fold in range(FOLDS):
        train = [i for i, f in enumerate(assignment) if f != fold]
        test = [i for i, f in enumerate(assignment) if f == fold]
        vocab = vocabulary([sets[i] for i in train])
        w, b = fit(matrix([sets[i] for i in train], vocab), np.array([labels[i] for i in train]))
        scores[test] = matrix([sets[i] for i in test], vocab) @ w + b
    return scores


def report(rows, scores: np.ndarray, threshold: float) -> None:
    scores = np.array(
        [s if long_enough(text) else -np.inf for (text, *_), s in zip(rows, scores, strict=True)]
    )
    by_kind: dict[str, list[bool]] = defaultdict(list)
    for (_, label, kind, _), score in zip(rows, scores, strict=True):
        by_kind[("+ " if label else "- ") + kind].append(bool(score >= threshold))
    positives = [s >= threshold for (_, y, *_), s in zip(rows, scores, strict=True) if y]
    negatives = [s >= threshold for (_, y, *_), s in zip(rows, scores, strict=True) if not y]
    print(f"held-out folds, threshold {threshold:.3f}:")
    print(f"  recall {np.mean(positives):.3f} on {len(positives)} injections")
    print(f"  false positives {np.mean(negatives):.3f} on {len(negatives)} benign texts")
    for kind, flags in sorted(by_kind.items()):
        print(f"  {kind:<40} {np.mean(flags):.3f}  (n={len(flags)})")


def long_enough(text: str) -> bool:
    """Whether the classifier judges this text at all (see MIN_WORDS)."""
    return len(words_of(normalize(text).lower())) >= MIN_WORDS


def held_out_threshold(rows, scores: np.ndarray) -> float:
    """The out-of-fold score above which TARGET_FPR of the benign texts it judges fall.

    The chat turns are left out of that count: they are many and, once
    learned, easy, so counted in the budget they would lower the threshold
    and let the harder benign kinds (questions, trigger words) pay for it.
    Their own held-out rate is printed by `report`.
    """
    judged = [
        i
        for i, (text, y, kind, _) in enumerate(rows)
        if not y and kind != CHAT_KIND and long_enough(text)
    ]
    benign = np.sort(scores[judged])
    return float(benign[int(np.ceil(len(benign) * (1 - TARGET_FPR)))])


def held_out_verdicts(corpora: Path) -> dict[str, bool]:
    """Each training text's verdict from a model that did not see it.

    The scanner evaluation uses these instead of the committed model's,
    which was trained on every one of these texts and would flatter itself.
    """
    rows = load(corpora)
    scores = out_of_fold_scores(rows, feature_sets(rows))
    threshold = held_out_threshold(rows, scores)
    return {
        text: bool(score >= threshold) and long_enough(text)
        for (text, *_), score in zip(rows, scores, strict=True)
    }


def train(corpora: Path) -> dict:
    rows = load(corpora)
    sets = feature_sets(rows)
    scores = out_of_fold_scores(rows, sets)
    threshold = held_out_threshold(rows, scores)
    report(rows, scores, threshold)
    vocab = vocabulary(sets)
    w, b = fit(matrix(sets, vocab), np.array([y for _, y, *_ in rows]))
    weights = {f: round(float(v), 4) for f, v in zip(vocab, w, strict=True) if abs(v) >= 1e-3}
    return {"bias": round(float(b), 4), "threshold": round(threshold, 4), "weights": weights}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if not (args.corpora / "injection.jsonl").is_file():
        parser.error(
            f"no public development sets in {args.corpora}: name their folder "
            "(injection.jsonl, retrieval/) with --corpora"
        )
    model = train(args.corpora)
    text = json.dumps(model, sort_keys=True, ensure_ascii=False, indent=0) + "\n"
    if args.check:
        same = MODEL_PATH.read_text(encoding="utf-8") == text
        print("committed weights reproduce" if same else "committed weights differ")
        sys.exit(0 if same else 1)
    MODEL_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {len(model['weights'])} weights to {MODEL_PATH.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
