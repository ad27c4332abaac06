"""The compaction threshold against the labelled paraphrase and near-topic pairs."""

from benchmarks.eval.paraphrases import NEAR_TOPIC, PARAPHRASES
from memory_app.dreams.compact import PARAPHRASE_MIN, same_claim
from memory_app.embeddings import document_text, get_backend


def _same(pairs) -> list[bool]:
    texts = [t for pair in pairs for t in pair]
    vectors = get_backend().embed([document_text(t[:120], "", t) for t in texts])
    return [
        float(vectors[2 * n] @ vectors[2 * n + 1]) >= PARAPHRASE_MIN and same_claim(a, b)
        for n, (a, b) in enumerate(pairs)
    ]


def test_the_threshold_finds_most_paraphrases_and_few_near_topic_pairs():
    found = sum(_same(PARAPHRASES))
    false_merges = sum(_same(NEAR_TOPIC))
    assert found / len(PARAPHRASES) >= 0.8
    assert found / (found + false_merges) >= 0.9
