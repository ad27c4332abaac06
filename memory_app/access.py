"""Who may see what: the only place that decides.

Every read of stores or documents — API tools, pages, exports — goes
through these accessors and predicates. A thing the principal may not see
is reported as not found, never as forbidden, so its existence does not
leak.
"""

import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet
from django.utils import timezone

from memory_app.actors import Actor
from memory_app.errors import InvalidInput, NotFound, named
from memory_app.models import (
    LIVE_STATES,
    ContextTrace,
    Conversation,
    DreamJob,
    DreamKind,
    DreamReviewItem,
    GrantLevel,
    MemoryDocument,
    MemoryEvent,
    MemoryStore,
    MemoryUsage,
    Scope,
    System,
    SystemGrant,
)
from memory_app.paths import path_error
from memory_app.permissions import (
    can_decide_reviews,
    can_review,
    has_memory_permission,
    is_service_account,
    memory_permissions_known,
)
from memory_app.selectors.turn import TurnRows, turn_rows
from memory_app.services.stores import conversation_store_name, store_of_user_unsaved

STORE_SELECT = ("store", "store__owner", "store__system", "store__conversation")
# The columns MemoryStore.label reads, for lists that load documents with .only().
STORE_LABEL_COLUMNS = (
    "store__scope",
    "store__slug",
    "store__owner__username",
    "store__system__slug",
    "store__conversation__external_id",
)


def systems_readable(user: AbstractBaseUser) -> QuerySet[System]:
    """Systems on which one of the user's teams holds a read or manage grant.

    Nothing when "read memory" is revoked for the user's groups.
    """
    if not has_memory_permission(user, "read_memory"):
        return System.objects.none()
    return System.objects.filter(
        pk__in=SystemGrant.objects.filter(team__user=user).values("system_id")
    )


def systems_manageable(user: AbstractBaseUser) -> QuerySet[System]:
    return System.objects.filter(
        pk__in=SystemGrant.objects.filter(team__user=user, level=GrantLevel.MANAGE).values(
            "system_id"
        )
    )


def store_read_q(user: AbstractBaseUser, prefix: str = "") -> Q:
    """The predicate "user may read this store", for stores or related rows."""
    if not has_memory_permission(user, "read_memory"):
        return Q(pk__in=[])
    p = prefix
    return (
        Q(**{f"{p}scope": Scope.WORKSPACE})
        | Q(**{f"{p}scope": Scope.USER, f"{p}owner": user})
        | Q(
            **{
                f"{p}scope": Scope.CONVERSATION,
                f"{p}conversation_id__in": Conversation.objects.filter(participants=user).values(
                    "id"
                ),
            }
        )
        | Q(
            **{
                f"{p}scope": Scope.SYSTEM,
                f"{p}system_id__in": SystemGrant.objects.filter(team__user=user).values(
                    "system_id"
                ),
            }
        )
    )


def stores_readable(user: AbstractBaseUser) -> QuerySet[MemoryStore]:
    return MemoryStore.objects.filter(store_read_q(user))


def documents_readable(user: AbstractBaseUser) -> QuerySet[MemoryDocument]:
    """Every document the user may read, in any state."""
    return MemoryDocument.objects.filter(store_read_q(user, prefix="store__"))


def unexpired_q(prefix: str = "") -> Q:
    """The predicate "not past its expiry", for documents or related rows.

    The expiry job tombstones an expired document only on its next run
    (every 15 minutes); until then every read treats it as gone, as search
    and context do.
    """
    return Q(**{f"{prefix}expires_at__isnull": True}) | Q(
        **{f"{prefix}expires_at__gt": timezone.now()}
    )


def live_q(prefix: str = "") -> Q:
    """The predicate "live": in a live state (LIVE_STATES) and not expired."""
    return Q(**{f"{prefix}state__in": LIVE_STATES}) & unexpired_q(prefix)


def documents_reviewable(user: AbstractBaseUser) -> QuerySet[MemoryDocument]:
    """What a reviewer must be able to open to decide: every readable
    document, plus each document a review item names (the draft behind a
    proposal, the document a deletion request would remove, a merge's
    cluster), wherever it lives. Others get `documents_readable`.
    """
    if not can_review(user) or is_service_account(user):
        return documents_readable(user)
    if not has_memory_permission(user, "read_memory"):
        return MemoryDocument.objects.none()
    named = DreamReviewItem.objects.filter(source_document__isnull=False)
    clusters = DreamReviewItem.related_documents.through.objects.values("memorydocument_id")
    return MemoryDocument.objects.filter(
        store_read_q(user, prefix="store__")
        | Q(pk__in=named.values("source_document_id"))
        | Q(pk__in=clusters)
    )


def access_store(actor: Actor, name: object) -> MemoryStore:
    """The store a request names (API.md, "Store names"), or NotFound."""
    if not isinstance(name, str) or not name or len(name) > 200:
        raise InvalidInput("A store name is required.", fields={"store": ["Name a store."]})
    user = actor.user
    if name == "conversation":
        if actor.conversation is None and actor.conversation_name:
            return _not_yet_created_store(actor.conversation_name)
        if actor.conversation is None:
            raise InvalidInput(
                "The conversation store needs the X-Memory-Conversation header.",
                fields={"store": ["Send X-Memory-Conversation to use 'conversation'."]},
            )
        store = _turn_store(actor, name) or (
            MemoryStore.objects.filter(conversation=actor.conversation).first()
        )
    elif name == "user":
        if not has_memory_permission(user, "read_memory"):
            raise NotFound(f"No store named {named(name)}.")
        return _turn_store(actor, name) or _own_store(user)
    elif store := _turn_store(actor, name):
        return store
    else:
        query = store_named_q(name)
        if query is None:
            query = Q(scope=Scope.WORKSPACE, slug=name)
        store = (
            stores_readable(user)
            .filter(query)
            .select_related("owner", "system", "conversation")
            .first()
        )
    if store is None:
        raise NotFound(f"No store named {named(name)}.")
    return store


def store_named_q(name: str) -> Q | None:
    """The store a `system:`, `user:` or `conversation:` name points at (API.md,
    "Store names"), as a predicate; None for any other name (a slug)."""
    kind, _, rest = name.partition(":")
    if not rest:
        return None
    return {
        "system": Q(scope=Scope.SYSTEM, system__slug=rest),
        "user": Q(scope=Scope.USER, owner__username=rest),
        "conversation": Q(scope=Scope.CONVERSATION, conversation__external_id=rest),
    }.get(kind)


def _turn_store(actor: Actor, name: str) -> MemoryStore | None:
    """The store `name` names among those resolved with the turn
    (Actor.stores), without a query; None when it is not among them (it
    may still be readable: another conversation of the user's)."""
    if actor.stores is None:
        return None
    kind, _, rest = name.partition(":")
    if name in ("conversation", "user"):
        wanted = {"conversation": Scope.CONVERSATION, "user": Scope.USER}[name]
        found = (store for store in actor.stores.values() if store.scope == wanted)
    elif rest and kind == "system":
        found = (
            store
            for store in actor.stores.values()
            if store.scope == Scope.SYSTEM and store.system.slug == rest
        )
    elif rest and kind in ("user", "conversation"):
        return None
    else:
        found = (
            store
            for store in actor.stores.values()
            if store.scope == Scope.WORKSPACE and store.slug == name
        )
    return next(found, None)


def _own_store(user: AbstractBaseUser) -> MemoryStore:
    """The user's private store; before its first kept write, an unsaved empty
    one, which a write creates in its own transaction (`store_saved`)."""
    store = MemoryStore.objects.filter(scope=Scope.USER, owner=user).first()
    return store or store_of_user_unsaved(user=user)


def _not_yet_created_store(external_id: str) -> MemoryStore:
    """What a read sees of a conversation no write has created yet: an empty
    store (API.md), unsaved, with an id no row has, so it lists nothing."""
    return MemoryStore(
        pk=0,
        scope=Scope.CONVERSATION,
        slug="conversation",
        name=conversation_store_name(external_id),
        conversation=Conversation(external_id=external_id),
    )


def access_document(
    actor: Actor,
    *,
    id: object = None,  # the API's own field name
    store: object = None,
    path: object = None,
    reviewing: bool = False,
) -> MemoryDocument:
    """The document named by id or by store + path, if the actor may read it.

    `reviewing` (the review pages) widens this for reviewers to the
    documents they decide about (`documents_reviewable`).
    """
    visible = documents_reviewable if reviewing else documents_readable
    documents = visible(actor.user).select_related(*STORE_SELECT)
    if id is not None:
        try:
            document_id = uuid.UUID(str(id))
        except ValueError:
            raise InvalidInput("Not a document id.", fields={"id": ["Must be a UUID."]}) from None
        document = documents.filter(pk=document_id).first()
    elif store is not None and path is not None:
        if error := path_error(path):
            raise InvalidInput(error, fields={"path": [error]})
        document = documents.filter(store=access_store(actor, store), path=path).first()
    else:
        raise InvalidInput(
            "Name the document by id, or by store and path.",
            fields={"id": ["Send 'id', or 'store' and 'path'."]},
        )
    if document is None:
        raise NotFound("No such document.")
    return document


@dataclass(frozen=True)
class Turn:
    """The conversation of a tool call and the stores its turn may draw on
    (None: not resolved, when a call names no conversation and reads no stores)."""

    conversation: Conversation | None
    stores: dict[int, MemoryStore] | None


def access_turn(
    *,
    user: AbstractBaseUser,
    external_id: str | None,
    known: TurnRows | None = None,
) -> Turn:
    """The conversation of the X-Memory-Conversation header, with the stores
    `context_stores_q` allows, in one statement (selectors/turn.py).

    A conversation that does not exist yet gets None and is created by
    nothing here: only a write that succeeds creates it
    (`services.conversations.conversation_claim`), so no one can claim an id
    before its rightful user's first write. A user who is not a participant
    of an existing one gets NotFound. Also primes `has_memory_permission`
    for the user. `known` is the statement's answer when the caller's key
    came with it.
    """
    found = known or turn_rows(user=user, external_id=external_id)
    memory_permissions_known(user, found)
    stores = found.stores if has_memory_permission(user, "read_memory") else {}
    if external_id is None or found.conversation is None:
        return Turn(None, stores)
    if not found.joined:
        raise NotFound("No such conversation.")
    return Turn(found.conversation, stores)


def access_user_by_name(username: str) -> AbstractBaseUser:
    user = (
        get_user_model()
        .objects.select_related("principal")
        .filter(username=username, is_active=True)
        .first()
    )
    if user is None:
        raise NotFound("No such user.")
    return user


def store_ref(store: MemoryStore, actor: Actor | None = None) -> str:
    """How a store is named in responses; the request forms where they apply."""
    if store.scope == Scope.WORKSPACE:
        return store.slug
    if store.scope == Scope.SYSTEM:
        return f"system:{store.system.slug}"
    if store.scope == Scope.USER:
        if actor is not None and store.owner_id == actor.user.pk:
            return "user"
        return f"user:{store.owner.get_username()}"
    if actor is not None and actor.conversation and store.conversation_id == actor.conversation.pk:
        return "conversation"
    return f"conversation:{store.conversation.external_id}"


def _own_or_shared_store_q(user: AbstractBaseUser, shared: Q | None = None) -> Q:
    """Rows the user made, and other principals' rows, in a conversation the
    user takes part in, about a document of a store the user reads there:
    the conversation's own store, or the user's own (an agent acting for
    them). `shared` narrows the others' rows further.

    Only that: another participant's turn also reads their own store and the
    systems they are granted, and its events and usage rows name those
    documents by path and store (a context event lists every document
    injected), which the user may not see. The conversations and stores are
    read first, as ids (one statement): given as lists, the outbox's
    principal and conversation indexes both serve the OR, where subqueries
    left a filter over every row.
    """
    rows = list(
        MemoryStore.objects.filter(
            Q(conversation__participants=user) | Q(scope=Scope.USER, owner=user)
        ).values_list("id", "conversation_id")
    )
    stores = [store_id for store_id, _ in rows]
    conversations = [conversation_id for _, conversation_id in rows if conversation_id]
    others = Q(conversation_id__in=conversations, document__store_id__in=stores)
    return Q(principal=user) | (others & shared if shared is not None else others)


def traces_readable(user: AbstractBaseUser) -> QuerySet[ContextTrace]:
    """Retrieval traces: reviewers see all; others only their own, since a
    trace names every candidate of its turn, from every store its principal
    reads. Nothing without "read memory", as for events."""
    if not has_memory_permission(user, "read_memory"):
        return ContextTrace.objects.none()
    traces = ContextTrace.objects.all()
    if can_review(user):
        return traces
    return traces.filter(principal=user)


def events_readable(user: AbstractBaseUser, *, on_behalf: bool = False) -> QuerySet[MemoryEvent]:
    """The whole outbox for whoever may work the review queue: a person with
    the review right, acting as themselves. Everyone else, and anyone acting
    on a reviewer's behalf, sees their own events and other participants'
    events about the documents of a conversation store they share
    (`_own_or_shared_store_q`): the review right is a person's
    (`policy.check_can_review`) and does not pass with the act-on-behalf
    header.

    Nothing for a user whose groups revoke "read memory": events name
    documents, their paths and stores, as reads do."""
    if not has_memory_permission(user, "read_memory"):
        return MemoryEvent.objects.none()
    events = MemoryEvent.objects.all()
    if not on_behalf and can_decide_reviews(user):
        return events
    # A proposal's events name its target store and path, which another
    # participant may not read.
    others = ~Q(type__startswith="memory.promotion.")
    return events.filter(_own_or_shared_store_q(user, others))


def event_documents_readable(
    user: AbstractBaseUser, events: Iterable[MemoryEvent]
) -> dict[uuid.UUID, MemoryDocument]:
    """The documents these events name that the user may open now, by id,
    with their stores, in one query.

    An event stays readable after the access that let its viewer see its
    document is gone (a team left, a grant revoked), but the document's
    head does not: its title and store are the document's now, not the
    event's, and only those who may open the document's page may see them.
    """
    ids = {event.document_id for event in events if event.document_id}
    if not ids:
        return {}
    documents = (
        documents_reviewable(user)
        .filter(pk__in=ids)
        .select_related(*STORE_SELECT)
        .only("id", "title", *STORE_LABEL_COLUMNS)
    )
    return {document.pk: document for document in documents}


def usages_readable(user: AbstractBaseUser) -> QuerySet[MemoryUsage]:
    """Injections of memory into turns: reviewers see all; others their own
    and other participants' uses of a shared conversation store's documents.
    Nothing without "read memory"."""
    if not has_memory_permission(user, "read_memory"):
        return MemoryUsage.objects.none()
    usages = MemoryUsage.objects.all()
    if can_review(user):
        return usages
    return usages.filter(_own_or_shared_store_q(user))


# Jobs that stand for one agent's request: their item holds a draft or names a
# document from a conversation the viewer may not take part in.
REQUEST_KINDS = (DreamKind.PROMOTION, DreamKind.DELETION)


def dream_jobs_readable(user: AbstractBaseUser) -> QuerySet[DreamJob]:
    """Background runs for everyone; the jobs of agents' requests for
    reviewers who may read memory (a request's job names its document)."""
    jobs = DreamJob.objects.all()
    if can_review(user) and has_memory_permission(user, "read_memory"):
        return jobs
    return jobs.exclude(kind__in=REQUEST_KINDS)
