from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef

from memory_app.models import Conversation
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
        try:
            with transaction.atomic():
                conversation = Conversation.objects.create(external_id=external_id, created_by=user)
                conversation.participants.add(user)
                store_for_conversation(conversation=conversation)
                return conversation
        except IntegrityError:
            conversation = conversation_find(user=user, external_id=external_id)
    return conversation if conversation.joined else None
