"""Filing a dream's proposals: the same review items agents' proposals make."""

from django.conf import settings

from memory_app.models import DreamJob, MemoryDocument, MemoryStore, ReviewAction, Scope
from memory_app.safety.registry import scan_fields
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
    """Open a review item for the document's head version.

    False if the same item is already open, or if the text would be refused
    in the target store (an injection phrase tolerated in a conversation is
    not proposed for shared memory: approving it could only fail).
    """
    text = {"title": document.title, "content": document.content if content is None else content}
    findings = scan_fields(text, conversation_store=target_store.scope == Scope.CONVERSATION)
    if action != ReviewAction.TOMBSTONE and any(f.blocking for f in findings):
        return False
    item, created = review_item_open(
        actor=None,
        kind=job.kind,
        action=action,
        source_version=document.versions.get(version=document.version),
        target_store=target_store,
        target_path=target_path,
        job=job,
        proposed_title=text["title"],
        proposed_content=text["content"],
        rationale=rationale,
        findings=[f.as_dict() for f in findings],
    )
    if created and related:
        item.related_documents.set(related)
    return created
