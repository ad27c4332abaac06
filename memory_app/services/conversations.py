from collections.abc import Callable
from dataclasses import replace

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef

from memory_app.actors import Actor
from memory_app.errors import ApplicationError, NotFound
from memory_app.models import Conversation, MemoryEvent
from memory_app.services.stores import store_for_conversation


def conversation_find(*, user: AbstractBaseUser, external_id: str) -> Conversation | None:
    """The conversation with its `joined` flag (is `user` a participant), in one query."""
    participants = Conversation.participants.through.objects.filter(
        conversation_id=OuterRef("pk"), user_id=user.pk
    )
    return (
        Conversation.objects.filter(external_id=external_id)
        .annotate(joined=Exists(participants))
        .first()
    )


def conversation_open(*, user: AbstractBaseUser, external_id: str) -> Conversation | None:
    """The conversation if `user` takes part in it; created on first use.

    Returns None when it exists and `user` is not a participant: joining an
    existing conversation is not something a header can do.
    """
    conversation = conversation_find(user=user, external_id=external_id)
    if conversation is None:
        return _conversation_create(user=user, external_id=external_id)
    return conversation if conversation.joined else None


def conversation_claim[T](*, actor: Actor, write: Callable[[Actor], T]) -> T:
    """Run `write` in the conversation `actor.conversation_name` names, which
    did not exist when the call began, creating it in the write's transaction.

    The first write creates a conversation (API.md), so one that fails or
    keeps nothing must not: otherwise any caller could claim an id before its
    rightful user's first write. Whether the write kept something is read
    from its events: each kept write records one naming its document. If not,
    the conversation is rolled back with everything else, and the events that
    name no document (refusals, which the services record to outlive a
    failed write; a capture's summary) are recorded again without it, the
    conversation's id in their payload.

    A concurrent first write of the same id waits on this transaction's
    insert: it then joins the conversation when its user is this one, and
    gets NotFound otherwise. Raises NotFound when another user's write
    created it first.
    """
    external_id = actor.conversation_name
    failure: ApplicationError | None = None
    with transaction.atomic():
        conversation = _conversation_create(user=actor.user, external_id=external_id)
        if conversation is None:
            raise NotFound("No such conversation.")
        try:
            result = write(replace(actor, conversation=conversation, conversation_name=""))
        except ApplicationError as error:
            failure = error
        recorded = list(MemoryEvent.objects.filter(conversation=conversation))
        unbound = [event for event in recorded if event.document_id is None]
        if failure is None and len(unbound) < len(recorded):
            return result
        transaction.set_rollback(True)
    MemoryEvent.objects.bulk_create(
        MemoryEvent(
            type=event.type,
            principal_id=event.principal_id,
            payload={**event.payload, "conversation": external_id},
        )
        for event in unbound
    )
    if failure is not None:
        raise failure
    return result


def _conversation_create(*, user: AbstractBaseUser, external_id: str) -> Conversation | None:
    """A new conversation with `user` as participant, and its store. When a
    concurrent caller created it first, theirs if `user` takes part in it,
    else None."""
    try:
        with transaction.atomic():
            conversation = Conversation.objects.create(external_id=external_id, created_by=user)
            conversation.participants.add(user)
            store_for_conversation(conversation=conversation)
            return conversation
    except IntegrityError:
        conversation = conversation_find(user=user, external_id=external_id)
    return conversation if conversation.joined else None
