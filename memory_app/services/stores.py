"""Creating the stores that exist one per user, system or conversation."""

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

from memory_app.models import Conversation, MemoryStore, Scope, System


def _get_or_create(lookup: dict, defaults: dict) -> MemoryStore:
    """get_or_create that tolerates a concurrent creator of the same store."""
    try:
        with transaction.atomic():
            store, _ = MemoryStore.objects.get_or_create(**lookup, defaults=defaults)
            return store
    except IntegrityError:
        return MemoryStore.objects.get(**lookup)


def store_for_user(*, user: AbstractBaseUser) -> MemoryStore:
    """The user's private store, created on first use."""
    return _get_or_create({"owner": user, "scope": Scope.USER}, _user_store_fields(user))


def store_of_user_unsaved(*, user: AbstractBaseUser) -> MemoryStore:
    """The user's private store as it will be once created, unsaved and with
    an id no row has: what a read or a write sees before the first write that
    keeps something, so that neither leaves a store behind (`store_saved`)."""
    return MemoryStore(pk=0, owner=user, scope=Scope.USER, **_user_store_fields(user))


def store_saved(store: MemoryStore) -> MemoryStore:
    """`store`, created now when it is an unsaved user store; called inside
    the write's transaction, so a write that fails leaves no store."""
    if store._state.adding and store.scope == Scope.USER:
        return store_for_user(user=store.owner)
    return store


def _user_store_fields(user: AbstractBaseUser) -> dict:
    return {"slug": f"user-{user.pk}", "name": f"{user.get_username()}'s memories"}


def store_for_system(*, system: System) -> MemoryStore:
    return _get_or_create(
        {"system": system, "scope": Scope.SYSTEM},
        {"slug": f"system-{system.slug}", "name": system.name or system.slug},
    )


def store_for_conversation(*, conversation: Conversation) -> MemoryStore:
    return _get_or_create(
        {"conversation": conversation, "scope": Scope.CONVERSATION},
        {
            "slug": f"conversation-{conversation.pk}",
            "name": conversation_store_name(conversation.external_id),
        },
    )


def conversation_store_name(external_id: str) -> str:
    """A conversation store's display name: its id may take all 200
    characters a name has, so a long one is cut, with an ellipsis."""
    name = f"conversation {external_id}"
    limit = MemoryStore._meta.get_field("name").max_length
    return name if len(name) <= limit else name[: limit - 1] + "…"


def store_workspace_ensure(*, slug: str, name: str, description: str = "") -> MemoryStore:
    return _get_or_create(
        {"slug": slug, "scope": Scope.WORKSPACE}, {"name": name, "description": description}
    )
