"""memory_delete and its confirmation: deletion always needs a human."""

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from memory_app.actors import Actor
from memory_app.errors import NotFound
from memory_app.models import (
    ChangeKind,
    DocState,
    DreamKind,
    DreamReviewItem,
    MemoryDocument,
    ReviewAction,
    ReviewStatus,
)
from memory_app.policy import check_can_curate, check_can_write, check_document_writable
from memory_app.services.documents import head_update
from memory_app.services.events import event_record
from memory_app.services.guard import recording_refusals, scan_for_store, scan_note
from memory_app.services.review_items import OPEN, review_item_close, review_item_open


def memory_delete_request(
    *, actor: Actor, document: MemoryDocument, reason: str = ""
) -> tuple[DreamReviewItem, bool]:
    """Ask a human to tombstone a document the actor can read.

    Returns the review item and whether it was created (False: an open
    request for the same version already existed). Emits
    `memory.deletion.requested`. The reason is agent text shown to the
    deciding human, so it is scanned under the document's store rules.
    """
    check_can_write(actor)
    with recording_refusals(actor, tool="memory_delete", document_id=str(document.pk)):
        check_document_writable(document.state)
        scan_for_store({"reason": reason}, document.store)
    item, created = review_item_open(
        actor=actor,
        kind=DreamKind.DELETION,
        action=ReviewAction.TOMBSTONE,
        source_version=document.versions.get(version=document.version),
        target_store=document.store,
        target_path=document.path,
        rationale=reason,
    )
    if not created:
        return item, False
    event_record(
        "memory.deletion.requested",
        actor=actor,
        document=document,
        payload={"review_item_id": str(item.pk), "path": document.path},
    )
    return item, True


def deletion_decide(
    *, user: AbstractBaseUser, item: DreamReviewItem, confirm: bool, note: str = ""
) -> DreamReviewItem:
    """Confirm (tombstone, a new version) or decline a deletion request.

    Raises PermissionDenied unless the user may curate the document; NotFound when the
    item is not an open deletion request; WriteBlocked when the note holds
    a secret or an injection phrase (it becomes the version's reason and is
    repeated in the event). Emits `memory.document.tombstoned` or
    `memory.deletion.declined`.
    """
    scan_note(user, note, tool="deletion_decide", store=item.target_store)
    return _deletion_decided(user=user, item=item, confirm=confirm, note=note)


@transaction.atomic
def _deletion_decided(
    *, user: AbstractBaseUser, item: DreamReviewItem, confirm: bool, note: str
) -> DreamReviewItem:
    item = (
        DreamReviewItem.objects.select_for_update(of=("self",))
        .select_related("job")
        .filter(pk=item.pk, action=ReviewAction.TOMBSTONE, status__in=OPEN)
        .first()
    )
    if item is None:
        raise NotFound("No open deletion request with that id.")
    document = (
        MemoryDocument.objects.select_for_update(of=("self",))
        .select_related("store__conversation")
        .get(pk=item.source_document_id)
    )
    check_can_curate(user, document)
    if confirm and document.state != DocState.TOMBSTONED:
        head_update(
            document,
            change=ChangeKind.TOMBSTONE,
            author=user,
            fields={"state": DocState.TOMBSTONED},
            reason=note or item.rationale,
        )
        item.result_version = document.versions.get(version=document.version)
    status = ReviewStatus.APPROVED if confirm else ReviewStatus.REJECTED
    review_item_close(item, user=user, status=status, note=note)
    event_record(
        "memory.document.tombstoned" if confirm else "memory.deletion.declined",
        principal=user,
        document=document,
        payload={"review_item_id": str(item.pk), "path": document.path, "note": note},
    )
    return item
