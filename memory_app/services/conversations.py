from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

from memory_app.models import Conversation
from memory_app.services.stores import store_for_conversation


def conversation_open(*, user: AbstractBaseUser, external_id: str) -> Conversation | None:
    """The conversation if `user` takes part in it; created on first use.

    Returns None when it exists and `user` is not a participant: joining an
    existing conversation is not something a header can do.
    """
    conversation = Conversation.objects.filter(external_id=external_id).first()
    if conversation is None:
        try:
            with transaction.atomic():
                conversation = Conversation.objects.create(external_id=external_id, created_by=user)
                conversation.participants.add(user)
                store_for_conversation(conversation=conversation)
                return conversation
        except IntegrityError:
            conversation = Conversation.objects.get(external_id=external_id)
    if not conversation.participants.filter(pk=user.pk).exists():
        return None
    return conversation
