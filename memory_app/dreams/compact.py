"""Compaction: clusters of near-duplicate documents become merge proposals.

Within one store, two active documents are near-duplicates when both dedup
gates pass (embedding cosine and content token overlap; see
services/dedup.py). Near-duplicate pairs are joined into clusters; each
cluster becomes one merge proposal onto its keeper — the most trusted, then
most used, then oldest document — with the others' distinct lines appended.
Approving supersedes the others; their history stays.
"""

from collections import defaultdict

from django.db import transaction
from pgvector.django import CosineDistance

from memory_app.dreams.progress import Progress
from memory_app.dreams.proposals import propose
from memory_app.models import (
    TRUST_WEIGHT,
    DocState,
    DreamJob,
    MemoryDocument,
    ReviewAction,
)
from memory_app.selectors.search import set_vector_search_options
from memory_app.services.dedup import COSINE_MIN, TOKEN_OVERLAP_MIN, token_overlap

NEIGHBOURS = 5
FIELDS = (
    "id",
    "store_id",
    "path",
    "title",
    "content",
    "trust",
    "hit_count",
    "version",
    "created_at",
)


def _neighbours(document: MemoryDocument) -> list[MemoryDocument]:
    with transaction.atomic():
        set_vector_search_options()
        return list(
            MemoryDocument.objects.filter(
                store_id=document.store_id, state=DocState.ACTIVE, embedding__isnull=False
            )
            .exclude(pk=document.pk)
            .annotate(distance=CosineDistance("embedding", document.embedding))
            .order_by("distance")
            .only(*FIELDS)[:NEIGHBOURS]
        )


def clusters(documents: list[MemoryDocument], progress: Progress) -> list[list[MemoryDocument]]:
    """Connected groups of near-duplicates (union-find over passing pairs)."""
    parent: dict = {}
    linked: set = set()
    by_id = {d.pk: d for d in documents}

    def root(key):
        while parent.get(key, key) != key:
            key = parent[key]
        return key

    for document in documents:
        for other in _neighbours(document):
            if 1 - other.distance < COSINE_MIN:
                break
            if token_overlap(document.content, other.content) >= TOKEN_OVERLAP_MIN:
                parent[root(other.pk)] = root(document.pk)
                linked |= {document.pk, other.pk}
        progress.advance()
    groups = defaultdict(list)
    for key in linked:
        groups[root(key)].append(by_id[key])
    return [sorted(m, key=lambda d: d.created_at) for m in groups.values()]


def keeper(cluster: list[MemoryDocument]) -> MemoryDocument:
    return min(
        cluster,
        key=lambda d: (-TRUST_WEIGHT.get(d.trust, 0.0), -d.hit_count, d.created_at),
    )


def merged_content(main: MemoryDocument, others: list[MemoryDocument]) -> str:
    """The keeper's text plus any line the others add."""
    seen = {line.strip() for line in main.content.splitlines() if line.strip()}
    extra = []
    for other in others:
        for line in other.content.splitlines():
            if line.strip() and line.strip() not in seen:
                seen.add(line.strip())
                extra.append(line)
    return main.content if not extra else main.content.rstrip() + "\n" + "\n".join(extra)


def compact(job: DreamJob, progress: Progress) -> dict:
    """Store by store, so memory holds one store's documents at a time."""
    candidates = MemoryDocument.objects.filter(state=DocState.ACTIVE, embedding__isnull=False)
    store_ids = list(candidates.values_list("store_id", flat=True).distinct().order_by())
    progress.total(candidates.count())
    stats = {"documents": 0, "clusters": 0, "proposed": 0}
    for store_id in store_ids:
        documents = list(
            candidates.filter(store_id=store_id)
            .select_related("store")
            .only(*FIELDS, "embedding", "store__slug")
            .order_by("created_at")
        )
        found = clusters(documents, progress)
        stats["documents"] += len(documents)
        stats["clusters"] += len(found)
        stats["proposed"] += sum(_propose_merge(job, cluster) for cluster in found)
    return stats


def _propose_merge(job: DreamJob, cluster: list[MemoryDocument]) -> bool:
    main = keeper(cluster)
    others = [d for d in cluster if d.pk != main.pk]
    return propose(
        job,
        main,
        action=ReviewAction.MERGE,
        target_store=main.store,
        target_path=main.path,
        content=merged_content(main, others),
        rationale=(
            f"{len(others)} near-duplicate(s) of this document in {main.store.slug}: "
            + ", ".join(d.path for d in others)
        ),
        related=cluster,
    )
