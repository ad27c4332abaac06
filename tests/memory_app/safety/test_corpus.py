"""The scanner meets its targets on the labelled corpus."""

from collections import Counter

from memory_app.safety import scan_fields
from memory_app.safety.normalize import normalize
from memory_app.safety.registry import DETECTORS
from tests.memory_app.safety.corpus import build_corpus

CORPUS = build_corpus()


def _flagged(sample) -> bool:
    return any(f.blocking for f in scan_fields({"content": sample.text}, conversation_store=False))


def test_the_corpus_is_big_enough():
    counts = Counter(sample.positive for sample in CORPUS)
    assert counts[True] >= 150 and counts[False] >= 150


def test_recall_on_in_policy_secrets_is_at_least_99_percent():
    positives = [s for s in CORPUS if s.positive]
    missed = [s.kind for s in positives if not _flagged(s)]
    assert 1 - len(missed) / len(positives) >= 0.99, Counter(missed)


def test_false_positives_stay_at_or_below_one_percent():
    negatives = [s for s in CORPUS if not s.positive]
    flagged = [s.kind for s in negatives if _flagged(s)]
    assert len(flagged) / len(negatives) <= 0.01, Counter(flagged)


CREDENTIALS = {"secrets", "entropy"}


def test_each_positive_is_caught_by_its_own_family():
    for sample in (s for s in CORPUS if s.positive):
        wanted = CREDENTIALS if sample.family in CREDENTIALS else {sample.family}
        family = [d for d in DETECTORS if d.family in wanted]
        assert any(d.find(normalize(sample.text)) for d in family), sample.kind
