"""Embeddings and re-scans: keeping derived data in step with the code."""

from django.db.models import F, Prefetch

from memory_app.dreams.decisions import decided_items
from memory_app.dreams.progress import Progress
from memory_app.dreams.proposals import propose_review
from memory_app.models import (
    DocState,
    DreamJob,
    DreamKind,
    MemorySourceRef,
    MemoryVersion,
    ReviewAction,
    Scope,
)
from memory_app.safety.registry import SCANNER_VERSION, scan_fields
from memory_app.services.embedding_backfill import embeddings_backfill, stale_embeddings
from memory_app.services.promote import draft_texts
from memory_app.services.versions import SourceRef

BATCH = 64
# What a rescan reads of a head; a flag's proposal loads the rest it needs.
HEAD_FIELDS = (
    "document_id",
    "version",
    "title",
    "recall_hint",
    "content",
    "metadata",
    "document__path",
    "document__version",
    "document__state",
    "document__store__scope",
)


def embed(job: DreamJob, progress: Progress) -> dict:
    """Embed documents missing a vector or embedded by another model."""
    progress.total(stale_embeddings().count())
    done = 0
    while written := embeddings_backfill(batch_size=BATCH, limit=BATCH):
        done += written
        progress.advance(written)
    return {"embedded": done}


def rescan(job: DreamJob, progress: Progress) -> dict:
    """Scan live heads last scanned by older rules; flag the ones now caught.

    The fields are those a write scans: path, title, recall hint, content,
    tags, entity values and source refs. History is append-only, so a flag
    is a deletion request for a curator (the Deletions page) rather than an
    edit of the old version. Until it is decided the document is
    constrained: text the scanner now refuses is not presented to agents as
    reviewed. A flag a curator decided is not raised again while the
    document is unchanged, unless a detector it did not name now matches.
    """
    heads = list(
        MemoryVersion.objects.filter(
            document__state__in=(DocState.ACTIVE, DocState.CONSTRAINED),
            version=F("document__version"),
        )
        .exclude(scanner_version=SCANNER_VERSION)
        .select_related("document__store")
        .only(*HEAD_FIELDS)
        .prefetch_related(Prefetch("source_refs", MemorySourceRef.objects.order_by("id")))
        .order_by("created_at")
    )
    progress.total(len(heads))
    stats = {"scanned": len(heads), "flagged": 0, "already_decided": 0}
    for head in heads:
        document = head.document
        findings = scan_fields(
            {"path": document.path, **draft_texts(head, head.content, _refs(head))},
            conversation_store=document.store.scope == Scope.CONVERSATION,
        )
        detectors = sorted({f.detector for f in findings if f.blocking})
        if detectors and _flag_decided(document, detectors):
            stats["already_decided"] += 1
        elif detectors:
            stats["flagged"] += propose_review(
                job,
                document,
                rationale=(
                    f"Scanner {SCANNER_VERSION} now blocks this text ({', '.join(detectors)}). "
                    "Delete it, or keep it if the match is a false alarm."
                ),
            )
        progress.advance()
    return {**stats, "scanner_version": SCANNER_VERSION}


def _refs(head: MemoryVersion) -> list[SourceRef]:
    return [SourceRef(r.kind, r.ref) for r in head.source_refs.all()]


def _flag_decided(document, detectors: list[str]) -> bool:
    """A curator decided a rescan flag on this text naming all of `detectors`."""
    return any(
        set(detectors) <= {f["detector"] for f in item.findings if f.get("blocking", True)}
        for item in decided_items(ReviewAction.TOMBSTONE, [document], kind=DreamKind.RESCAN)
    )
