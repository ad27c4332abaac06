"""Retrieval drift canary: fixed queries whose answers should not move on their own.

For each shared store (workspace and system) the canary runs the queries in
MEMORY_CANARY_QUERIES and keeps the top-10 document ids in the run's stats.
If a store's top-10 for a query differs from the previous successful run
while nothing in that store was written since, retrieval itself changed
(an index rebuilt differently, a model swapped, a ranking bug) and the run
reports it, with a `memory.canary.drift` event.

"Written" is read two ways: a document's `updated_at` moved, or the store's
fingerprint did. Some of the app's own writes leave `updated_at` alone (an
embedding filled in, a document constrained for review or released), so
each run also keeps a fingerprint of every document's id, state, version,
trust and embedding (present or not, and by which model): what decides
whether a document is a candidate and how it ranks, short of its words,
which only change with a new version.
"""

import hashlib

from django.conf import settings
from django.db.models import Case, CharField, F, Max, StringAgg, Value, When
from django.db.models.functions import Cast, Concat

from memory_app.dreams.progress import Progress
from memory_app.models import (
    DocState,
    DreamJob,
    DreamKind,
    JobStatus,
    MemoryDocument,
    MemoryStore,
    Scope,
)
from memory_app.selectors.search import hybrid_candidates, rerank
from memory_app.services.events import event_record

TOP = 10


def _top(store: MemoryStore, query: str) -> list[str]:
    scope = {store.pk: store}
    documents = MemoryDocument.objects.filter(store=store, state=DocState.ACTIVE)
    candidates = hybrid_candidates(documents, query, scope=scope, k=TOP * 2)
    return [str(c.document.pk) for c in rerank(candidates, query, "hybrid")[:TOP]]


def fingerprint(store: MemoryStore) -> str:
    """A digest of what each document of the store brings to retrieval."""
    embedded = Case(
        When(embedding__isnull=True, then=Value("-")),
        default=F("embedding_model"),
        output_field=CharField(),
    )
    row = Concat(
        Cast("id", CharField()),
        Value(":"),
        "state",
        Value(":"),
        Cast("version", CharField()),
        Value(":"),
        "trust",
        Value(":"),
        embedded,
        output_field=CharField(),
    )
    listing = MemoryDocument.objects.filter(store=store).aggregate(
        rows=StringAgg(row, delimiter=Value(","), order_by="id")
    )["rows"]
    return hashlib.sha256((listing or "").encode()).hexdigest()


def canary(job: DreamJob, progress: Progress) -> dict:
    stores = list(
        MemoryStore.objects.filter(scope__in=(Scope.WORKSPACE, Scope.SYSTEM))
        .annotate(last_write=Max("documents__updated_at"))
        .filter(documents__state=DocState.ACTIVE)
        .distinct()
        .order_by("slug")
    )
    queries = settings.MEMORY_CANARY_QUERIES
    progress.total(len(stores) * len(queries))
    previous = (
        DreamJob.objects.filter(kind=DreamKind.CANARY, status=JobStatus.SUCCEEDED)
        .exclude(pk=job.pk)
        .order_by("-finished_at")
        .first()
    )
    before = previous.stats.get("results", {}) if previous else {}
    printed_before = previous.stats.get("fingerprints", {}) if previous else {}
    results, fingerprints, drift = {}, {}, []
    for store in stores:
        results[store.slug] = {}
        fingerprints[store.slug] = fingerprint(store)
        unwritten = (
            previous is not None
            and (store.last_write is None or store.last_write <= previous.started_at)
            and printed_before.get(store.slug, fingerprints[store.slug]) == fingerprints[store.slug]
        )
        for query in queries:
            top = _top(store, query)
            results[store.slug][query] = top
            earlier = before.get(store.slug, {}).get(query)
            if earlier is not None and earlier != top and unwritten:
                drift.append({"store": store.slug, "query": query})
            progress.advance()
    if drift:
        event_record("memory.canary.drift", payload={"job_id": str(job.pk), "drift": drift})
    return {
        "stores": len(stores),
        "queries": len(queries),
        "drift": drift,
        "results": results,
        "fingerprints": fingerprints,
    }
