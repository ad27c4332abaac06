"""Reading the events outbox by cursor."""

from memory_app.access import events_readable
from memory_app.actors import Actor
from memory_app.models import Conversation, MemoryEvent


def events_after(
    actor: Actor,
    *,
    after: int = 0,
    conversation: Conversation | None = None,
    limit: int = 100,
) -> list[MemoryEvent]:
    events = events_readable(actor.user, on_behalf=actor.on_behalf_of is not None)
    events = events.filter(id__gt=after)
    if conversation is not None:
        events = events.filter(conversation=conversation)
    return list(events.order_by("id")[:limit])
