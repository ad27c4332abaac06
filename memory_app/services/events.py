"""The events outbox: one row per notable thing, read by cursor."""

from django.contrib.auth.models import AbstractBaseUser

from memory_app.actors import Actor
from memory_app.models import Conversation, MemoryDocument, MemoryEvent

# Every type of event the outbox holds (the `event_record` calls): what a
# webhook may subscribe to, and what the events page filters by. A type
# recorded anywhere is listed here, or no one can subscribe to it (a test
# checks).
EVENT_TYPES = (
    "memory.context.loaded",
    "memory.document.written",
    "memory.write.blocked",
    "memory.policy.denied",
    "memory.promotion.proposed",
    "memory.promotion.approved",
    "memory.promotion.rejected",
    "memory.deletion.requested",
    "memory.deletion.declined",
    "memory.document.tombstoned",
    "memory.document.restored",
    "memory.document.rolled_back",
    "memory.document.always_inject",
    "memory.document.redacted",
    "memory.capture.completed",
    "memory.canary.drift",
    "memory.exported",
)


def event_record(
    type: str,  # the event's own field name
    *,
    actor: Actor | None = None,
    principal: AbstractBaseUser | None = None,
    conversation: Conversation | None = None,
    document: MemoryDocument | None = None,
    payload: dict | None = None,
) -> MemoryEvent:
    """Append an event. Callers outside a failed transaction (denials,
    blocks) call this after the rollback, so the event survives it."""
    body = dict(payload or {})
    if actor is not None:
        principal = principal or actor.agent
        conversation = conversation or actor.conversation
        if actor.run_id:
            body.setdefault("run_id", actor.run_id)
        if actor.on_behalf_of is not None:
            body.setdefault("on_behalf_of", actor.user.get_username())
    return MemoryEvent.objects.create(
        type=type,
        principal=principal,
        conversation=conversation,
        document=document,
        payload=body,
    )
