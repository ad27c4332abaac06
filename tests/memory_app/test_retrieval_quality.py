"""A slice of the hard retrieval evaluation runs in CI: ranking changes that
lose recall fail the build (the full set: benchmarks/retrieval_eval.py).

Four services of the ops tenant: 220 memories (runbooks, near-topic
conversation turns, dated change notes) and 64 sentence questions. The
floors sit one question under what the ranking measures today (all 0.975,
paraphrase 0.917, multi-hop 0.875, the rest 1.0; two of the four
no-answer questions get nothing, 2.8 hits on average).
"""

import pytest

from benchmarks.eval.dataset import SERVICES
from benchmarks.eval.hard import ops_set
from benchmarks.eval.run import MODES, evaluate_hard, load_hard

pytestmark = pytest.mark.django_db

SLICE = SERVICES[:4]
FLOORS = {
    "all": 0.95,
    "sentence": 0.95,
    "identifier": 0.95,
    "temporal": 0.95,
    "multihop": 0.75,
    "paraphrase": 0.83,
}
# No-answer questions: the share that gets nothing, and the most hits on average.
NO_ANSWER_EMPTY = 0.5
NO_ANSWER_HITS = 4.0


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
    assert hybrid["no_answer"].empty >= NO_ANSWER_EMPTY, hybrid["no_answer"]
    assert hybrid["no_answer"].returned <= NO_ANSWER_HITS, hybrid["no_answer"]
    for single in ("text", "semantic"):
        assert hybrid["all"].recall_at_5 > scores[single]["all"].recall_at_5, scores
        assert hybrid["all"].mrr > scores[single]["all"].mrr, scores
