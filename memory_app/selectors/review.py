"""Review items as reviewers see them."""

from django.db.models import QuerySet

from memory_app.models import DreamReviewItem

# What naming an item's target store (MemoryStore.label) reads.
TARGET_STORE_SELECT = (
    "target_store",
    "target_store__owner",
    "target_store__system",
    "target_store__conversation",
)


def review_items(
    *, status: str | None = None, action: str | tuple[str, ...] | None = None
) -> QuerySet:
    """Review items, oldest first, with what a listing shows joined in.

    Callers check the review right first: items carry draft content from
    conversations the reviewer does not take part in.
    """
    items = DreamReviewItem.objects.select_related(
        *TARGET_STORE_SELECT, "source_version", "proposed_by", "decided_by"
    ).order_by("created_at", "id")
    if status:
        items = items.filter(status=status)
    if isinstance(action, tuple):
        items = items.filter(action__in=action)
    elif action:
        items = items.filter(action=action)
    return items
