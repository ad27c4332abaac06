"""Reading the events outbox by cursor."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet

from memory_app.models import Conversation, MemoryEvent
from memory_app.permissions import can_review


def events_visible_to(user: AbstractBaseUser) -> QuerySet[MemoryEvent]:
    """Reviewers see every event; others their own and their conversations'."""
    events = MemoryEvent.objects.all()
    if can_review(user):
        return events
    return events.filter(
        Q(principal=user)
        | Q(conversation_id__in=Conversation.objects.filter(participants=user).values("id"))
    )


def events_after(
    user: AbstractBaseUser,
    *,
    after: int = 0,
    conversation: Conversation | None = None,
    limit: int = 100,
) -> list[MemoryEvent]:
    events = events_visible_to(user).filter(id__gt=after)
    if conversation is not None:
        events = events.filter(conversation=conversation)
    return list(events.order_by("id")[:limit])
