"""Filing a dream's proposals: the same review items agents' proposals make."""

from django.conf import settings

from memory_app.models import DreamJob, MemoryDocument, MemoryStore, ReviewAction, Scope
from memory_app.services.review_items import review_item_open


def consolidation_target() -> MemoryStore | None:
    """The workspace store consolidation proposes into (MEMORY_CONSOLIDATE_TARGET)."""
    return MemoryStore.objects.filter(
        scope=Scope.WORKSPACE, slug=settings.MEMORY_CONSOLIDATE_TARGET
    ).first()


def propose(
    job: DreamJob,
    document: MemoryDocument,
    *,
    action: str = ReviewAction.PROMOTE,
    target_store: MemoryStore,
    target_path: str,
    rationale: str,
    content: str | None = None,
    related: list[MemoryDocument] = (),
) -> bool:
    """Open a review item for the document's head version; False if already open."""
    item, created = review_item_open(
        actor=None,
        kind=job.kind,
        action=action,
        source_version=document.versions.get(version=document.version),
        target_store=target_store,
        target_path=target_path,
        job=job,
        proposed_title=document.title,
        proposed_content=document.content if content is None else content,
        rationale=rationale,
    )
    if created and related:
        item.related_documents.set(related)
    return created
