"""A slice of the retrieval evaluation set runs in CI: ranking changes that
lose recall fail the build (the full set: benchmarks/retrieval_eval.py)."""

import pytest

from benchmarks.eval.dataset import SERVICES, memories, queries
from benchmarks.eval.run import evaluate, load_memories
from memory_app.actors import actor_for
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

SLICE = SERVICES[:5]


@pytest.fixture
def scores(db):
    ids_by_path = load_memories(memories(services=SLICE))
    query_rows = queries(services=SLICE)
    actor = actor_for(UserFactory(username="evaluator"))
    return {
        mode: evaluate(actor, query_rows, ids_by_path, mode)
        for mode in ("text", "semantic", "hybrid")
    }


def test_hybrid_meets_the_recall_target_and_beats_each_single_mode(scores):
    # One test: loading and embedding the slice is the expensive part.
    assert scores["hybrid"].recall_at_5 >= 0.9, scores
    for single in ("text", "semantic"):
        assert scores["hybrid"].recall_at_5 > scores[single].recall_at_5, scores
        assert scores["hybrid"].mrr > scores[single].mrr, scores
