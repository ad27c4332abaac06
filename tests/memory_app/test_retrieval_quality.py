"""A slice of the hard retrieval evaluation runs in CI: ranking changes that
lose recall fail the build (the full set: benchmarks/retrieval_eval.py).

Four services of the ops tenant: 220 memories (runbooks, near-topic
conversation turns, dated change notes) and 56 sentence questions. The
floors sit a few points under what the ranking measures today.
"""

import pytest

from benchmarks.eval.dataset import SERVICES
from benchmarks.eval.hard import ops_set
from benchmarks.eval.run import MODES, evaluate_hard, load_hard

pytestmark = pytest.mark.django_db

SLICE = SERVICES[:4]
FLOORS = {
    "all": 0.85,
    "sentence": 0.9,
    "identifier": 0.9,
    "temporal": 0.9,
    "multihop": 0.75,
    "paraphrase": 0.4,
}


@pytest.fixture
def scores(db):
    rows, query_rows = ops_set(services=SLICE)
    tenants = load_hard(rows)
    return {mode: evaluate_hard(tenants, query_rows, mode) for mode in MODES}


def test_hybrid_meets_each_kinds_floor_and_beats_each_single_mode(scores):
    # One test: loading and embedding the slice is the expensive part.
    hybrid = scores["hybrid"]
    for kind, floor in FLOORS.items():
        assert hybrid[kind].recall_at_5 >= floor, (kind, hybrid[kind])
    for single in ("text", "semantic"):
        assert hybrid["all"].recall_at_5 > scores[single]["all"].recall_at_5, scores
        assert hybrid["all"].mrr > scores[single]["all"].mrr, scores
