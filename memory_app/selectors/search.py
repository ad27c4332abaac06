"""Hybrid retrieval: full-text or nearest neighbours, re-ranked (DESIGN §4).

Candidates come from two indexes, each over-fetched: the GIN-indexed
tsvector with an all-words `websearch_to_tsquery` (fast; an OR-of-words
query ranked on every match is a latency cliff, see STACK.md) and the HNSW
cosine index with iterative scans, so a selective store filter still yields
k rows. Recall comes mostly from the vector side; the text side rewards
exact names (a service, an error code). One more query scores the union on
both signals, and each candidate is re-ranked:

    0.45·relevance + 0.20·trust + 0.15·entity + 0.10·doc_type + 0.10·recency
"""

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db import connection, transaction
from django.db.models import F, FloatField, Q, QuerySet, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from pgvector.django import CosineDistance

from memory_app.access import access_store, store_read_q
from memory_app.actors import Actor
from memory_app.embeddings import embed_text
from memory_app.models import (
    TRUST_WEIGHT,
    DocState,
    MemoryDocument,
    MemoryStore,
    Scope,
    Trust,
)

WEIGHTS = {"text": 0.45, "trust": 0.20, "entity": 0.15, "doc_type": 0.10, "recency": 0.10}
DOC_TYPE_BOOST = {
    "runbook": 0.9,
    "checklist": 0.85,
    "incident": 0.8,
    "verification": 0.7,
    "service_pattern": 0.7,
    "convention": 0.6,
    "fact": 0.6,
    "user_preference": 0.5,
    "note": 0.4,
}
RECENCY_HALF_LIFE_DAYS = 30.0
OVERFETCH = 3
# In hybrid mode relevance is meaning, lifted toward 1 by an exact-words
# match: `semantic + (1 - semantic) · LEXICAL_LIFT · lexical`. A query with
# no text match at all ranks exactly as semantic search does.
LEXICAL_LIFT = 0.5
HNSW_EF_SEARCH = 100
# Nearest neighbours always exist; below this cosine they are not related
# (all-MiniLM-L6-v2 puts unrelated sentences around 0.0-0.15).
MIN_SEMANTIC = 0.25

MODES = ("hybrid", "text", "semantic")
_WORD = re.compile(r"[a-z0-9][a-z0-9._-]*")
# Ticket ids, config keys, error codes: tokens with a digit, dot or underscore.
_IDENTIFIER = re.compile(r"(?<![\w.-])(?=[\w.-]*[0-9._])[A-Za-z0-9][\w.-]*[A-Za-z0-9](?![\w-])")


@dataclass
class Scored:
    document: MemoryDocument
    score: float
    components: dict[str, float]
    lexical: float = 0.0
    semantic: float = 0.0
    sources: set[str] = field(default_factory=set)


def context_stores_q(actor: Actor) -> Q:
    """The stores memory for this actor's turn may come from.

    Workspace, the user's own store, the systems they may read, and only the
    store of the conversation in the headers — never another conversation's.
    """
    readable = store_read_q(actor.user)
    in_scope = Q(scope__in=[Scope.WORKSPACE, Scope.SYSTEM]) | Q(scope=Scope.USER, owner=actor.user)
    if actor.conversation is not None:
        in_scope |= Q(scope=Scope.CONVERSATION, conversation=actor.conversation)
    return readable & in_scope


STORE_FIELDS = (
    "id",
    "slug",
    "scope",
    "owner__username",
    "system__slug",
    "conversation__external_id",
)
DOCUMENT_FIELDS = (
    "id",
    "store_id",
    "path",
    "title",
    "content",
    "doc_type",
    "trust",
    "state",
    "always_inject",
    "entities",
    "version",
    "updated_at",
)


def context_stores(actor: Actor, stores: Sequence[str] | None = None) -> dict[int, MemoryStore]:
    """The stores a turn may draw on, by id, resolved once per request.

    A plain id list keeps the candidate queries simple for the planner, and
    attaching these store objects to the hits spares a four-table join on
    every candidate fetch.
    """
    if stores:
        resolved = [access_store(actor, name) for name in stores]
        return {store.pk: store for store in resolved}
    return {
        store.pk: store
        for store in MemoryStore.objects.filter(context_stores_q(actor))
        .select_related("owner", "system", "conversation")
        .only(*STORE_FIELDS)
    }


def searchable_documents(
    actor: Actor,
    *,
    stores: Sequence[str] | None = None,
    doc_types: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
    include_drafts: bool = True,
    scope: dict[int, MemoryStore] | None = None,
) -> QuerySet[MemoryDocument]:
    """Active documents of the actor's context stores, narrowed by the filters."""
    if scope is None:
        scope = context_stores(actor, stores)
    documents = MemoryDocument.objects.filter(store_id__in=list(scope), state=DocState.ACTIVE)
    if doc_types:
        documents = documents.filter(doc_type__in=doc_types)
    if tags:
        documents = documents.filter(tags__overlap=list(tags))
    if not include_drafts:
        documents = documents.exclude(trust=Trust.AGENT_DRAFT)
    return documents


def set_vector_search_options() -> None:
    """Let filtered HNSW scans keep going until they find k rows (pgvector ≥ 0.8).

    Lasts until the end of the caller's transaction.
    """
    # set_config(..., true) is SET LOCAL; both in one round trip.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
            "set_config('hnsw.ef_search', %s, true)",
            [str(HNSW_EF_SEARCH)],
        )


def text_query(query_text: str) -> SearchQuery:
    """All words of the query, or any identifier it names.

    All-words keeps the text side fast and precise, but one extra word
    ("INC-4411 what was the fix") defeats it. Identifiers are rare tokens,
    so OR-ing just those stays selective and cheap on the GIN index.
    """
    query = SearchQuery(query_text, search_type="websearch", config="english")
    identifiers = [token for token in _IDENTIFIER.findall(query_text) if len(token) >= 4]
    for identifier in identifiers[:5]:
        query |= SearchQuery(identifier, search_type="phrase", config="english")
    return query


def _text_candidates(documents: QuerySet, query: SearchQuery, k: int) -> list:
    return list(
        documents.filter(search_vector=query)
        .annotate(rank=SearchRank(F("search_vector"), query, normalization=32))
        .order_by("-rank")
        .values_list("pk", flat=True)[:k]
    )


def _vector_candidates(documents: QuerySet, vector: list[float], k: int) -> list:
    return list(
        documents.filter(embedding__isnull=False)
        .order_by(CosineDistance("embedding", vector))
        .values_list("pk", flat=True)[:k]
    )


def entity_match(entities: dict, message_words: set[str], message: str) -> float:
    """Share of the document's named entities that the message mentions."""
    values = [str(v).lower() for v in entities.values() if v]
    if not values:
        return 0.0
    hits = sum(1 for v in values if v in message_words or (len(v) > 3 and v in message))
    return hits / len(values)


def recency(updated_at: datetime, now: datetime) -> float:
    age_days = max(0.0, (now - updated_at).total_seconds() / 86400)
    return math.exp(-math.log(2) * age_days / RECENCY_HALF_LIFE_DAYS)


def rerank(candidates: Iterable[Scored], message: str, mode: str) -> list[Scored]:
    """Score each candidate on DESIGN §4's components, best first.

    The text rank is made relative to the best text match in the set, so
    the top exact match counts fully whatever ts_rank's absolute scale.
    """
    candidates = list(candidates)
    now = timezone.now()
    lowered = message.lower()
    words = set(_WORD.findall(lowered))
    best_lexical = max((c.lexical for c in candidates), default=0.0) or 1.0
    for candidate in candidates:
        document = candidate.document
        lexical = candidate.lexical / best_lexical
        if mode == "text":
            relevance = lexical
        elif mode == "semantic":
            relevance = candidate.semantic
        else:
            relevance = candidate.semantic + (1 - candidate.semantic) * LEXICAL_LIFT * lexical
        candidate.components = {
            "text": round(relevance, 4),
            "trust": TRUST_WEIGHT.get(document.trust, 0.0),
            "entity": round(entity_match(document.entities, words, lowered), 4),
            "doc_type": DOC_TYPE_BOOST.get(document.doc_type, 0.4),
            "recency": round(recency(document.updated_at, now), 4),
        }
        candidate.score = round(
            sum(WEIGHTS[name] * value for name, value in candidate.components.items()), 4
        )
    return sorted(candidates, key=lambda c: (-c.score, c.document.path))


def hybrid_candidates(
    documents: QuerySet,
    query_text: str,
    *,
    scope: dict[int, MemoryStore],
    k: int,
    mode: str = "hybrid",
    query_vector: np.ndarray | None = None,
) -> list[Scored]:
    """The union of text and vector candidates, each scored on both signals."""
    query = text_query(query_text)
    text_ids: list = []
    vector_ids: list = []
    vector = None
    if mode in ("hybrid", "text"):
        text_ids = _text_candidates(documents, query, k)
    if mode in ("hybrid", "semantic"):
        vector = (query_vector if query_vector is not None else embed_text(query_text)).tolist()
        # SET LOCAL lasts until the end of the transaction: give it one.
        with transaction.atomic():
            set_vector_search_options()
            vector_ids = _vector_candidates(documents, vector, k)
    ids = list(dict.fromkeys([*text_ids, *vector_ids]))
    if not ids:
        return []
    annotated = (
        MemoryDocument.objects.filter(pk__in=ids)
        .only(*DOCUMENT_FIELDS)
        .annotate(
            lexical=SearchRank(F("search_vector"), query, normalization=32),
        )
    )
    if vector is not None:
        annotated = annotated.annotate(
            distance=Coalesce(
                CosineDistance("embedding", vector), Value(1.0), output_field=FloatField()
            )
        )
    text_set, vector_set = set(text_ids), set(vector_ids)
    scored = []
    for document in annotated:
        document.store = scope[document.store_id]
        semantic = max(0.0, 1.0 - float(document.distance)) if vector is not None else 0.0
        in_text = document.pk in text_set
        if not in_text and semantic < MIN_SEMANTIC:
            continue
        sources = {"text"} if in_text else set()
        if document.pk in vector_set:
            sources.add("semantic")
        scored.append(
            Scored(
                document=document,
                score=0.0,
                components={},
                # ts_rank also scores partial overlaps; only a full
                # all-words match counts as a text hit.
                lexical=float(document.lexical or 0.0) if in_text else 0.0,
                semantic=semantic,
                sources=sources,
            )
        )
    return scored


def memory_search(
    *,
    actor: Actor,
    query: str,
    limit: int = 10,
    stores: Sequence[str] | None = None,
    doc_types: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
    include_drafts: bool = True,
    mode: str = "hybrid",
) -> list[Scored]:
    """The best `limit` active documents for `query` among those the actor may read."""
    scope = context_stores(actor, stores)
    documents = searchable_documents(
        actor, doc_types=doc_types, tags=tags, include_drafts=include_drafts, scope=scope
    )
    candidates = hybrid_candidates(documents, query, scope=scope, k=limit * OVERFETCH, mode=mode)
    return rerank(candidates, query, mode)[:limit]


def snippet(content: str, query: str, width: int = 200) -> str:
    """A window of the content around the first query word it contains."""
    lowered = content.lower()
    positions = [lowered.find(word) for word in _WORD.findall(query.lower()) if len(word) > 2]
    positions = [p for p in positions if p >= 0]
    start = max(0, min(positions) - width // 4) if positions else 0
    text = content[start : start + width]
    return ("…" if start else "") + text + ("…" if start + width < len(content) else "")
