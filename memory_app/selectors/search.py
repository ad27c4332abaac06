"""Hybrid retrieval: full-text or nearest neighbours, re-ranked (DESIGN §4).

Candidates come from two indexes, each over-fetched, in two statements
(selectors/candidates.py): the GIN-indexed tsvector with a BM25-style
ranked OR of the query's informative terms, each term's reads capped (an
OR ranked on every match is a latency cliff, see STACK.md), and the HNSW
cosine index with iterative scans, so a selective store filter still yields
k rows. Hybrid candidates must clear a relevance floor; each is re-ranked:

    0.45·relevance + 0.20·trust + 0.15·entity + 0.10·doc_type + 0.02·recency
    (+ 0.30·time for a question about time)

Weights, lift and floor were tuned on the hard evaluation
(benchmarks/fusion_tune.py; decisions.md, Retrieval).
"""

import math
import re
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.db import connection
from django.db.models import Q, QuerySet
from django.utils import timezone

from memory_app.access import access_store, store_read_q
from memory_app.actors import Actor
from memory_app.embeddings import embed_text
from memory_app.errors import InvalidInput
from memory_app.models import (
    LIVE_STATES,
    TRUST_WEIGHT,
    DocState,
    MemoryDocument,
    MemoryStore,
    Scope,
    Trust,
)
from memory_app.selectors.candidates import STORE_TEST, Where, gather, moment_in
from memory_app.selectors.timeframe import time_window


@dataclass(frozen=True)
class Fusion:
    """How the signals of one candidate become its score (DESIGN §4, decisions.md).

    In hybrid mode relevance is meaning, lifted toward 1 by a words match:
    `semantic + (1 - semantic) · lexical_lift · lexical`, lexical relative to
    the best match of the set. A query with no text match at all ranks
    exactly as semantic search does. `floor` drops hybrid candidates whose
    absolute evidence, `semantic + (1 - semantic) · coverage`, stays under
    it, unless they hold an identifier of the question or were written in
    the time it asks about.
    """

    weights: dict[str, float] = field(
        default_factory=lambda: {
            "text": 0.45,
            "trust": 0.20,
            "entity": 0.15,
            "doc_type": 0.10,
            "recency": 0.02,
            "time": 0.30,
        }
    )
    lexical_lift: float = 0.5
    recency_half_life_days: float = 30.0
    floor: float = 0.48


FUSION = Fusion()
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
OVERFETCH = 3
HNSW_EF_SEARCH = 100
# Nearest neighbours always exist; below this cosine they are not related
# (all-MiniLM-L6-v2 puts unrelated sentences around 0.0-0.15).
MIN_SEMANTIC = 0.25

MODES = ("hybrid", "text", "semantic")
_WORD = re.compile(r"[a-z0-9][a-z0-9._-]*")


@dataclass
class Scored:
    document: MemoryDocument
    score: float
    components: dict[str, float]
    lexical: float = 0.0
    coverage: float = 0.0
    identifier: bool = False
    semantic: float = 0.0
    sources: set[str] = field(default_factory=set)
    pinned: bool = False
    # Written in the time the question names (selectors/timeframe.py).
    timely: bool = False


def evidence(semantic: float, coverage: float) -> float:
    """Meaning or words, on an absolute scale: what the relevance floor reads."""
    return semantic + (1 - semantic) * coverage


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
    "created_at",
)


def context_stores(actor: Actor, stores: Sequence[str] | None = None) -> dict[int, MemoryStore]:
    """The stores a turn may draw on, by id, resolved once per request.

    A plain id list keeps the candidate queries simple for the planner, and
    attaching these store objects to the hits spares a four-table join on
    every candidate fetch. A tool call has them already when they came with
    its conversation (access_turn); others ask here.
    """
    if stores:
        resolved = [_access_listed_store(actor, name) for name in stores]
        return {store.pk: store for store in resolved}
    if actor.stores is not None:
        return dict(actor.stores)
    return {
        store.pk: store
        for store in MemoryStore.objects.filter(context_stores_q(actor))
        .select_related("owner", "system", "conversation")
        .only(*STORE_FIELDS)
    }


def _access_listed_store(actor: Actor, name: str) -> MemoryStore:
    """`access_store` for one name of the `stores` argument: its refusals
    name the argument the caller sent (`stores`), not `store`."""
    try:
        return access_store(actor, name)
    except InvalidInput as error:
        fields = {
            "stores" if field == "store" else field: messages
            for field, messages in error.extra["fields"].items()
        }
        raise InvalidInput(error.detail, fields=fields) from None


def searchable_documents(
    actor: Actor,
    *,
    stores: Sequence[str] | None = None,
    doc_types: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
    include_drafts: bool = True,
    scope: dict[int, MemoryStore] | None = None,
) -> Where:
    """Active, unexpired documents of the actor's context stores, narrowed by the filters.

    Expiry is checked here, not only by the expiry job: between its runs an
    expired memory must not be served. Written as SQL: the ORM spent longer
    building and compiling this filter on every call (about 0.2 ms) than
    PostgreSQL spends on it.
    """
    if scope is None:
        scope = context_stores(actor, stores)
    conditions = [
        "(expires_at IS NULL OR expires_at > %s)",
        STORE_TEST,
        "state = ANY(%s)",
    ]
    params: list = [timezone.now(), list(scope), list(LIVE_STATES)]
    if doc_types:
        conditions.append("doc_type = ANY(%s)")
        params.append(list(doc_types))
    if tags:
        conditions.append("tags && %s::varchar(64)[]")
        params.append(list(tags))
    if not include_drafts:
        conditions.append("trust <> %s AND state <> %s")
        params += [Trust.AGENT_DRAFT, DocState.CONSTRAINED]
    return Where(
        " AND ".join(conditions),
        tuple(params),
        stores=tuple(scope),
        narrowed=bool(doc_types or tags),
    )


# The driver's connections whose session already holds the search options: a
# pooled connection is handed to Django again and again, and keeps them.
_search_sessions: weakref.WeakSet = weakref.WeakSet()


def search_session(sender, connection, **kwargs) -> None:
    """On every new database connection, set once rather than per search:
    filtered HNSW scans keep going until they find k rows (pgvector >= 0.8),
    and the named prepared statements (selectors/prepared.py) run on their
    generic plan from the first call.

    PostgreSQL's default plans a prepared statement afresh for its first
    five calls and often keeps doing so; the text side's plan took longer to
    make than to run (docs/benchmarks.md). Only those named statements are
    prepared; the one among them that reads vectors says which read it
    wants (candidates._nearest).
    """
    if connection.connection in _search_sessions:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', false), "
            "set_config('hnsw.ef_search', %s, false), "
            "set_config('plan_cache_mode', 'force_generic_plan', false)",
            [str(HNSW_EF_SEARCH)],
        )
    _search_sessions.add(connection.connection)


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


def entity_match(entities: dict, message_words: set[str], message: str) -> float:
    """Share of the document's named entities that the message mentions."""
    values = [str(v).lower() for v in entities.values() if v]
    if not values:
        return 0.0
    hits = sum(1 for v in values if v in message_words or (len(v) > 3 and v in message))
    return hits / len(values)


def recency(updated_at: datetime, now: datetime, half_life_days: float) -> float:
    age_days = max(0.0, (now - updated_at).total_seconds() / 86400)
    return math.exp(-math.log(2) * age_days / half_life_days)


def rerank(
    candidates: Iterable[Scored], message: str, mode: str, fusion: Fusion = FUSION
) -> list[Scored]:
    """Score each candidate on DESIGN §4's components, best first.

    The lexical score is made relative to the best lexical match in the
    set, so the top match counts fully whatever BM25's absolute scale (a
    share of the query's total term weight was tried: it drowns a rare
    identifier among the question's other words).
    """
    candidates = list(candidates)
    now = timezone.now()
    window = time_window(message, now) if mode == "hybrid" else None
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
            lift = fusion.lexical_lift * lexical
            relevance = candidate.semantic + (1 - candidate.semantic) * lift
        candidate.components = {
            "text": round(relevance, 4),
            "trust": TRUST_WEIGHT.get(document.trust, 0.0),
            "entity": round(entity_match(document.entities, words, lowered), 4),
            "doc_type": DOC_TYPE_BOOST.get(document.doc_type, 0.4),
            "recency": round(recency(document.updated_at, now, fusion.recency_half_life_days), 4),
        }
        if window is not None:
            # Only a question about time has this component (decisions.md).
            candidate.components["time"] = float(
                moment_in(window, document.created_at, document.updated_at)
            )
        weights = fusion.weights
        candidate.score = round(
            sum(weights[name] * value for name, value in candidate.components.items()), 4
        )
    return sorted(candidates, key=lambda c: (-c.score, c.document.path))


def hybrid_candidates(
    documents: QuerySet | Where,
    query_text: str,
    *,
    scope: dict[int, MemoryStore],
    k: int,
    mode: str = "hybrid",
    query_vector: np.ndarray | None = None,
    pinned: bool = False,
    fusion: Fusion = FUSION,
) -> list[Scored]:
    """Text, vector and (for a question about time) dated candidates, scored on each signal.

    Two statements, the query embedded while the first runs
    (selectors/candidates.py). A candidate found only by the
    vector side must be at least MIN_SEMANTIC close to count; in hybrid mode
    every candidate must also clear the relevance floor (`Fusion`), so a
    question no memory answers gets few or none rather than the nearest
    unrelated ones. Pinned documents are exempt: they are injected anyway.
    """
    vector = None
    if mode in ("hybrid", "semantic"):

        def vector() -> list[float]:
            found = query_vector if query_vector is not None else embed_text(query_text)
            return found.tolist()

    window = time_window(query_text, timezone.now()) if mode == "hybrid" else None
    found = gather(
        documents,
        query_text,
        fields=DOCUMENT_FIELDS,
        k=k,
        vector=vector,
        lexical=mode in ("hybrid", "text"),
        window=window,
        pinned=pinned,
    )
    floor = fusion.floor if mode == "hybrid" else 0.0
    scored = []
    for item in found:
        semantic = max(0.0, 1.0 - float(item.distance)) if item.distance is not None else 0.0
        sources = set(item.sources) - {"pinned"}
        pinned = "pinned" in item.sources
        timely = moment_in(window, *item.moments)
        # Decided on the row's scores: a candidate under the floor is never built.
        if not (
            pinned
            or kept(sources, semantic, item.coverage, item.identifier, timely=timely, floor=floor)
        ):
            continue
        document = item.document
        document.store = scope[document.store_id]
        scored.append(
            Scored(
                document=document,
                score=0.0,
                components={},
                lexical=item.lexical,
                coverage=item.coverage,
                identifier=item.identifier,
                semantic=semantic,
                sources=sources,
                pinned=pinned,
                timely=timely,
            )
        )
    return scored


def above_floor(candidate: Scored, floor: float) -> bool:
    """Whether a scored candidate clears the floor (`kept`)."""
    return kept(
        candidate.sources,
        candidate.semantic,
        candidate.coverage,
        candidate.identifier,
        timely=candidate.timely,
        floor=floor,
    )


def kept(
    sources: set[str],
    semantic: float,
    coverage: float,
    identifier: bool,
    *,
    timely: bool,
    floor: float,
) -> bool:
    """Close enough in meaning or words, holding an identifier the question names
    (a ticket id says more than any share of words), or written when it asks about."""
    if sources <= {"semantic"} and semantic < MIN_SEMANTIC:
        return False
    return timely or identifier or evidence(semantic, coverage) >= floor


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
