"""Filing a dream's proposals: the same review items agents' proposals make."""

from django.conf import settings
from django.db import transaction

from memory_app.models import (
    DreamJob,
    DreamReviewItem,
    MemoryDocument,
    MemoryStore,
    ReviewAction,
    Scope,
)
from memory_app.safety.registry import scan_fields
from memory_app.services.constrain import documents_constrain, involved_ids
from memory_app.services.promote import draft_texts, similar_in
from memory_app.services.review_items import OPEN, review_item_open


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
    constrain: list[MemoryDocument] = (),
) -> bool:
    """Open a review item for the document's head version.

    False if the same item is already open, or if the text would be refused
    in the target store (an injection phrase tolerated in a conversation is
    not proposed for shared memory: approving it could only fail). What is
    scanned is what an agent's proposal and the approval scan: the target
    path, the title, recall hint, content, tags, entities and source refs.
    The documents in `constrain` are held `constrained` while the item is
    open. The item, its related documents and the constraint are written in
    one transaction: an open merge never leaves its documents active.
    """
    source_version = document.versions.get(version=document.version)
    text = {"title": document.title, "content": document.content if content is None else content}
    findings = scan_fields(
        {"target_path": target_path, **draft_texts(source_version, text["content"])},
        conversation_store=target_store.scope == Scope.CONVERSATION,
    )
    if action != ReviewAction.TOMBSTONE and any(f.blocking for f in findings):
        return False
    with transaction.atomic():
        item, created = review_item_open(
            actor=None,
            kind=job.kind,
            action=action,
            source_version=source_version,
            target_store=target_store,
            target_path=target_path,
            job=job,
            proposed_title=text["title"],
            proposed_content=text["content"],
            rationale=rationale,
            findings=[f.as_dict() for f in findings],
        )
        if created and action == ReviewAction.PROMOTE and not related:
            # What the target store already holds on it, as an agent's proposal shows.
            related = similar_in(target_store, document, target_path)
        if created:
            _hold(item, related, constrain)
        elif (earlier := _earlier_run_item(item, job)) is not None:
            _hold(earlier, related, constrain)
    return created


def _hold(item: DreamReviewItem, related, constrain) -> None:
    """Name the item's related documents and constrain those it holds.

    Idempotent, so a re-run completes an item an earlier run of the kind
    filed before this was one transaction.
    """
    if related and not item.related_documents.exists():
        item.related_documents.set(related)
    if constrain:
        held = involved_ids(item)
        documents_constrain([d for d in constrain if d.pk in held])


def _earlier_run_item(item: DreamReviewItem, job: DreamJob) -> DreamReviewItem | None:
    """The open item, locked against a decision, if a run of this kind filed it.

    An agent's request for the same change is left as the agent filed it:
    asking does not constrain.
    """
    return (
        DreamReviewItem.objects.select_for_update(of=("self",))
        .filter(pk=item.pk, status__in=OPEN, job__kind=job.kind)
        .first()
    )


def propose_review(
    job: DreamJob, document: MemoryDocument, *, rationale: str, constrain: bool = True
) -> bool:
    """A deletion request for a curator.

    With `constrain`, the document is held constrained until it is decided:
    for text a rule refuses (a rescan's finding), not for a heuristic's
    doubt, which only asks.
    """
    return propose(
        job,
        document,
        action=ReviewAction.TOMBSTONE,
        constrain=[document] if constrain else [],
        target_store=document.store,
        target_path=document.path,
        rationale=rationale,
    )


def ever_proposed_for_promotion():
    """Ids of the documents ever proposed for promotion, whatever the decision."""
    return DreamReviewItem.objects.filter(action=ReviewAction.PROMOTE).values("source_document_id")
