"""The `constrained` state: a document whose text a reviewer is deciding on.

A dream that doubts a document's text (a merge of paraphrases, the draft
of a contradiction, a scanner flag) constrains it until a human decides.
Meanwhile it stays readable and searchable, but memory_context shows it
only among the untrusted candidates, marked `state="constrained"`. A
heuristic about reviewed text that any agent could trigger (a draft
disputing a runbook, a document nobody cites) only asks: it does not pull
reviewed memory out of the trusted context before a person has looked.

The state flips in place, without a version: being under review is not a
change of the memory's text, and the version chain records text changes.
"""

from collections.abc import Iterable

from memory_app.models import DocState, DreamReviewItem, MemoryDocument, ReviewStatus

OPEN = (ReviewStatus.PENDING, ReviewStatus.DEFERRED)


def documents_constrain(documents: Iterable[MemoryDocument]) -> int:
    """Mark active documents as under review; returns how many changed."""
    ids = [d.pk for d in documents]
    changed = MemoryDocument.objects.filter(pk__in=ids, state=DocState.ACTIVE).update(
        state=DocState.CONSTRAINED
    )
    for document in documents:
        if document.state == DocState.ACTIVE:
            document.state = DocState.CONSTRAINED
    return changed


def involved_ids(item: DreamReviewItem) -> set:
    """The documents a review item is about: its source and related documents."""
    ids = set(item.related_documents.values_list("pk", flat=True))
    if item.source_document_id:
        ids.add(item.source_document_id)
    return ids


def constraints_release(item: DreamReviewItem) -> int:
    """After a decision, free the item's documents that no other open item holds."""
    ids = involved_ids(item)
    held = DreamReviewItem.objects.filter(status__in=OPEN).exclude(pk=item.pk)
    still_held = set(
        held.filter(source_document_id__in=ids).values_list("source_document_id", flat=True)
    ) | set(held.filter(related_documents__in=ids).values_list("related_documents", flat=True))
    return MemoryDocument.objects.filter(
        pk__in=ids - still_held, state=DocState.CONSTRAINED
    ).update(state=DocState.ACTIVE)
