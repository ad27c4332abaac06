"""Ranking metrics over judged queries."""

import math
from collections.abc import Sequence


def recall_at(ranked: Sequence[str], relevant: Sequence[str], k: int) -> float:
    return len(set(ranked[:k]) & set(relevant)) / len(relevant)


def reciprocal_rank(ranked: Sequence[str], relevant: Sequence[str]) -> float:
    for position, item in enumerate(ranked, start=1):
        if item in relevant:
            return 1 / position
    return 0.0


def ndcg_at(ranked: Sequence[str], relevant: Sequence[str], k: int) -> float:
    gains = [1 / math.log2(i + 2) for i, item in enumerate(ranked[:k]) if item in relevant]
    ideal = sum(1 / math.log2(i + 2) for i in range(min(k, len(relevant))))
    return sum(gains) / ideal if ideal else 0.0
