"""Embeddings and re-scans: keeping derived data in step with the code."""

from django.db.models import OuterRef, Subquery

from memory_app.dreams.progress import Progress
from memory_app.dreams.proposals import propose_review
from memory_app.models import DocState, DreamJob, MemoryDocument, MemoryVersion
from memory_app.safety.registry import SCANNER_VERSION, scan_fields
from memory_app.services.embedding_backfill import embeddings_backfill, stale_embeddings

BATCH = 64


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

    History is append-only, so a flag is a deletion request for a curator
    (the Deletions page) rather than an edit of the old version. Until it is
    decided the document is constrained: text the scanner now refuses is
    not presented to agents as reviewed.
    """
    head_scanner = MemoryVersion.objects.filter(
        document=OuterRef("pk"), version=OuterRef("version")
    ).values("scanner_version")[:1]
    documents = list(
        MemoryDocument.objects.filter(state__in=(DocState.ACTIVE, DocState.CONSTRAINED))
        .annotate(scanned_with=Subquery(head_scanner))
        .exclude(scanned_with=SCANNER_VERSION)
        .select_related("store")
        .only("id", "path", "title", "recall_hint", "content", "version", "store__scope")
    )
    progress.total(len(documents))
    flagged = 0
    for document in documents:
        findings = scan_fields(
            {
                "title": document.title,
                "recall_hint": document.recall_hint,
                "content": document.content,
            },
            conversation_store=document.store.scope == "conversation",
        )
        detectors = sorted({f.detector for f in findings if f.blocking})
        if detectors:
            flagged += propose_review(
                job,
                document,
                rationale=(
                    f"Scanner {SCANNER_VERSION} now blocks this text ({', '.join(detectors)}). "
                    "Delete it, or keep it if the match is a false alarm."
                ),
            )
        progress.advance()
    return {"scanned": len(documents), "flagged": flagged, "scanner_version": SCANNER_VERSION}
