"""Two-gate near-duplicate detection (DESIGN §9).

A new write is a near-duplicate of an existing document only when both
gates pass: embedding cosine of the whole text (same meaning) and token
overlap of the content (same claim in the same words).
Either alone misfires: "my coffee is a cortado" and "... a flat white" are
close in meaning but a changed value must be an update, not a merge; and
two runbooks sharing boilerplate share tokens but not meaning.

Both gates still pass when one word of a long sentence changes ("enabled"
→ "disabled", "30 seconds" → "5 seconds", "Do run" → "Do not run"): the
overlap of seven-odd words survives a swap and the embedding barely tells
numbers or negations apart. So a pair is also held apart by its shape:
different figures, a negation on one side only, or a word replaced by
another that is not a misspelling or another form of it. Added words,
reordering, punctuation, typo fixes and a number's thousands separator
still merge.
"""

import re
from difflib import SequenceMatcher

import numpy as np
from django.db import connection
from django.utils import timezone

from memory_app.dreams.claims import conflicting_figures, negated, without_thousands
from memory_app.embeddings import get_backend, vector_literal
from memory_app.models import DocState, MemoryStore, Trust
from memory_app.selectors.candidates import TABLE

COSINE_MIN = 0.92
TOKEN_OVERLAP_MIN = 0.7
CANDIDATES = 5
# A misspelling is a word of 4+ letters at most one letter longer or
# shorter and this similar ("recieve" → "receive" is 0.86), or two letters
# swapped ("teh" → "the"); "allowed" → "disallowed" and other short words
# ("eu" → "us") are never typos.
TYPO_MIN_LENGTH = 4
TYPO_RATIO_MIN = 0.8
# Endings of one word's forms ("use"/"uses", "giving"/"gives"): a stem
# kept whole is the same word, not a value replaced.
_ENDINGS = ("ing", "es", "ed", "s", "d")
# Words that carry grammar, not a value: adding or dropping one ("before
# giving up" → "before it gives up") replaces nothing.
_GRAMMAR = frozenset(
    (
        *("a", "an", "the", "it", "its", "is", "are", "was", "were", "be", "been"),
        *("has", "have", "had", "will", "would", "can", "could", "to", "of", "in"),
        *("on", "at", "by", "for", "from", "with", "as", "and", "or", "but"),
        *("that", "this", "these", "those"),
    )
)

_TOKEN = re.compile(r"[a-z0-9]+")


def _tokens(text: str) -> set[str]:
    return set(_TOKEN.findall(without_thousands(text).lower()))


def token_overlap(a: str, b: str) -> float:
    """Jaccard overlap of the lower-cased word sets of two texts."""
    left, right = _tokens(a), _tokens(b)
    if not left or not right:
        return 0.0
    return len(left & right) / len(left | right)


def is_typo_of(word: str, other: str) -> bool:
    """Whether two different words are one word spelt two ways, or two
    forms of one word.

    Numbers are values, never misspellings ("15" → "16", "4411" → "4412").
    """
    if any(char.isdigit() for char in word + other):
        return False
    if _stem(word) == _stem(other) or _swapped(word, other):
        return True
    if min(len(word), len(other)) < TYPO_MIN_LENGTH or abs(len(word) - len(other)) > 1:
        return False
    return SequenceMatcher(None, word, other).ratio() >= TYPO_RATIO_MIN


def _stem(word: str) -> str:
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def _swapped(word: str, other: str) -> bool:
    """Two neighbouring letters swapped: "teh" → "the"."""
    if len(word) != len(other) or len(word) < 3:
        return False
    differ = [n for n, (a, b) in enumerate(zip(word, other, strict=True)) if a != b]
    return (
        len(differ) == 2
        and differ[1] == differ[0] + 1
        and word[differ[0]] == other[differ[1]]
        and word[differ[1]] == other[differ[0]]
    )


def _unmatched(words: set[str], others: set[str]) -> set[str]:
    return {word for word in words if not any(is_typo_of(word, other) for other in others)}


def replaces_a_word(a: str, b: str) -> bool:
    """Whether each text has a word the other lacks that no typo fix explains.

    One text merely adding words to the other is not a replacement; nor is
    a misspelling corrected, another form of a word ("use" → "uses"), or a
    grammar word added or dropped ("the", "it").
    """
    left, right = _tokens(a), _tokens(b)
    only_left, only_right = left - right, right - left
    return bool(_unmatched(only_left - _GRAMMAR, only_right)) and bool(
        _unmatched(only_right - _GRAMMAR, only_left)
    )


def same_claim(a: str, b: str) -> bool:
    """Whether two texts that share their words also state the same values."""
    return not (conflicting_figures(a, b) or negated(a) != negated(b) or replaces_a_word(a, b))


def near_duplicate(store: MemoryStore, *, content: str, embedding: np.ndarray | None) -> int | None:
    """The id of the active agent draft of `store` that a write of `content` duplicates.

    Reviewed memory is never updated in place by an agent's write (DESIGN §9,
    `policy.check_agent_may_overwrite`): a duplicate of it is written as a new
    draft, which compaction may propose to merge.

    Two notes sharing a title and recall hint but holding different values
    are different memories: the token gate compares content only, and
    `same_claim` holds apart contents that differ by one value. An expired
    draft is no candidate: the merged write would inherit its past
    `expires_at` and vanish from every read. Written as SQL: the ORM spent
    about 0.6 ms building this statement, half of what PostgreSQL takes to
    answer it at 10,000 documents.
    """
    if embedding is None:
        return None
    # The HNSW scan options are set once per connection (search_session);
    # only vectors of the current model compare with `embedding`.
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, content, embedding <=> %s::vector AS distance FROM {TABLE} "  # noqa: S608 - names from the models
            "WHERE store_id = %s AND state = %s AND trust = %s AND embedding IS NOT NULL "
            "AND embedding_model = %s AND (expires_at IS NULL OR expires_at > %s) "
            "ORDER BY distance LIMIT %s",
            [
                vector_literal(embedding),
                store.pk,
                DocState.ACTIVE,
                Trust.AGENT_DRAFT,
                get_backend().model_id,
                timezone.now(),
                CANDIDATES,
            ],
        )
        candidates = cursor.fetchall()
    for document_id, candidate_content, distance in candidates:
        if 1 - distance < COSINE_MIN:
            break
        if token_overlap(content, candidate_content) >= TOKEN_OVERLAP_MIN and same_claim(
            content, candidate_content
        ):
            return document_id
    return None
