"""Who is calling, on whose behalf, in which conversation and run."""

from collections.abc import Mapping
from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser

from memory_app.models import Conversation, MemoryStore


@dataclass(frozen=True)
class Actor:
    """The principal a call is evaluated as.

    `user` is whose access and stores apply (the on-behalf-of user when a
    service account sends X-Memory-On-Behalf-Of); `agent` is who actually
    called and is recorded as the author. Without the header they are the
    same user.
    """

    user: AbstractBaseUser
    agent: AbstractBaseUser
    conversation: Conversation | None = None
    run_id: str = ""
    # The X-Memory-Conversation a call named when no such conversation exists
    # yet: a write that succeeds creates it (services.conversations).
    conversation_name: str = ""
    # The stores this turn may draw on, by id, when they were resolved with
    # the conversation (access_turn); None: not resolved, ask the database.
    stores: Mapping[int, MemoryStore] | None = field(default=None, compare=False, repr=False)

    @property
    def on_behalf_of(self) -> AbstractBaseUser | None:
        return self.user if self.user.pk != self.agent.pk else None


def actor_for(user: AbstractBaseUser) -> Actor:
    """A plain actor for a human in the pages or a script."""
    return Actor(user=user, agent=user)
