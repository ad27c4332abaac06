"""Who may write what where: the only place that decides (DESIGN §2, §3).

Checked after access (a store the principal cannot see is already a 404)
and before the safety scan. Scope rules answer 403 `policy_denied`; a
revoked permission answers 403 `permission_denied`; service accounts are
held to a per-run write cap and a per-minute rate, answered with 429.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from memory_app.access import systems_manageable
from memory_app.actors import Actor
from memory_app.errors import InvalidInput, PermissionDenied, PolicyDenied, RateLimited
from memory_app.models import (
    DocState,
    DocType,
    DreamReviewItem,
    MemoryDocument,
    MemoryStore,
    MemoryVersion,
    Scope,
    Trust,
)
from memory_app.permissions import (
    can_curate_some_store,
    can_decide_reviews,
    can_review,
    has_memory_permission,
    is_service_account,
)

RATE_WINDOW = timedelta(minutes=1)


def check_can_read(actor: Actor) -> None:
    for user in {actor.user, actor.agent}:
        if not has_memory_permission(user, "read_memory"):
            raise PermissionDenied(f"{user.get_username()} may not read memory.")


def check_can_write(actor: Actor) -> None:
    for user in {actor.user, actor.agent}:
        if not has_memory_permission(user, "manage_memory"):
            raise PermissionDenied(f"{user.get_username()} may not write memory.")


def check_store_write(actor: Actor, store: MemoryStore, *, doc_type: str) -> None:
    """The scope rules for an agent tool writing into `store`."""
    check_can_write(actor)
    if store.scope == Scope.WORKSPACE:
        raise PolicyDenied(
            "Workspace memory changes only through an approved promotion: "
            "write to the conversation store and call memory_propose_promotion.",
            reason="workspace_requires_promotion",
        )
    if (
        store.scope == Scope.SYSTEM
        and not systems_manageable(actor.user).filter(pk=store.system_id).exists()
    ):
        raise PolicyDenied(
            "Writing system memory needs a manage grant on the system; "
            "propose a promotion instead.",
            reason="system_requires_manage_grant",
        )
    if store.scope == Scope.USER and doc_type != DocType.USER_PREFERENCE:
        raise PolicyDenied(
            "A user store holds only user_preference documents.",
            reason="user_store_preferences_only",
        )


def curates_every_store(user) -> bool:
    """Reviewers change documents of every store directly, whatever their
    teams' grants (can_curate_store)."""
    return can_curate_some_store(user) and can_review(user)


def can_curate_store(user, store: MemoryStore) -> bool:
    """May this person change documents of the store directly (not through a tool)?

    Humans only: reviewers anywhere; owners in their user store, participants
    in their conversation, managers in their system's store. Never someone
    whose groups revoke "read memory" or "manage memory" (can_curate_some_store).
    """
    if not can_curate_some_store(user):
        return False
    if can_review(user):
        return True
    if store.scope == Scope.USER:
        return store.owner_id == user.pk
    if store.scope == Scope.CONVERSATION:
        return store.conversation.participants.filter(pk=user.pk).exists()
    if store.scope == Scope.SYSTEM:
        return systems_manageable(user).filter(pk=store.system_id).exists()
    return False


def can_author_store(user, store: MemoryStore) -> bool:
    """May this person add a memory to the store from the pages?

    System and user stores: `can_curate_store`. Workspace stores hold only
    reviewed memory, so a person adding there needs the review right too.
    """
    if store.scope == Scope.WORKSPACE:
        return can_curate_store(user, store) and can_review(user)
    return store.scope in (Scope.SYSTEM, Scope.USER) and can_curate_store(user, store)


def can_curate(user, document: MemoryDocument) -> bool:
    """`can_curate_store` for the document's store. Used for deletion
    confirmations, rollbacks, edits and private pins."""
    return can_curate_store(user, document.store)


def curatable_stores_q(user, prefix: str = "") -> Q:
    """`can_curate` as a filter over stores (or rows related to a store)."""
    if not can_curate_some_store(user):
        return Q(pk__in=[])
    if can_review(user):
        return Q()
    p = prefix
    return (
        Q(**{f"{p}scope": Scope.USER, f"{p}owner": user})
        | Q(
            **{
                f"{p}scope": Scope.CONVERSATION,
                f"{p}conversation__participants": user,
            }
        )
        | Q(**{f"{p}scope": Scope.SYSTEM, f"{p}system__in": systems_manageable(user)})
    )


def check_can_curate(user, document: MemoryDocument) -> None:
    if not can_curate(user, document):
        raise PermissionDenied("You may not change this document.")


def can_govern(user, document: MemoryDocument) -> bool:
    """May this person pin, tombstone or restore the document?

    As `can_curate`, but workspace memory needs a reviewer: a pin or a
    removal there changes every agent's context. A system's managers
    govern their own system's card.
    """
    workspace = document.store.scope == Scope.WORKSPACE
    return can_curate(user, document) and (not workspace or can_review(user))


def check_can_govern(user, document: MemoryDocument) -> None:
    if not can_govern(user, document):
        raise PermissionDenied("Pins and removals here need a reviewer or the system's manager.")


def can_redact(user, document: MemoryDocument) -> bool:
    """May this person remove text from the document's whole history?

    Reviewers anywhere; otherwise only the owner, in their own user store
    (a redaction rewrites what every past reader saw).
    """
    if not can_curate(user, document):
        return False
    return can_review(user) or document.store.scope == Scope.USER


def check_can_redact(user, document: MemoryDocument) -> None:
    if not can_redact(user, document):
        raise PermissionDenied("Redaction needs a reviewer, or the owner of a private store.")


def check_can_review(user, doing: str = "Deciding promotions") -> None:
    """Deciding promotions (and what else reviewers do: `doing` names it)
    needs "review promotions", a person, and "read memory" (can_decide_reviews).
    A reviewer whose group revoked reading is told so, not that the right is
    missing: it is not, and an administrator looking for it would not find why."""
    if can_decide_reviews(user):
        return
    if can_review(user) and not is_service_account(user):
        raise PermissionDenied(f"{doing} needs read memory, which one of your groups revokes.")
    raise PermissionDenied(f"{doing} needs the review right.")


def check_can_approve(user) -> None:
    """Approving writes shared memory: it needs the review right and, like
    every other change a curator makes, "manage memory", which a group may
    revoke."""
    check_can_review(user)
    if not has_memory_permission(user, "manage_memory"):
        raise PermissionDenied(
            "Approving changes shared memory and needs manage memory, "
            "which one of your groups revokes."
        )


def check_document_writable(state: str, expires_at: datetime | None = None) -> None:
    """A deleted or replaced document takes no write, nor one past its
    expiry: every read already treats it as gone (access.unexpired_q) and
    the expiry job will tombstone it, so a write would answer "updated" for
    text no read serves, and a promotion would land it born expired."""
    if state in (DocState.TOMBSTONED, DocState.SUPERSEDED):
        raise PolicyDenied(
            f"The document is {state}; write a new document instead.",
            reason="document_not_active",
        )
    if expires_at is not None and expires_at <= timezone.now():
        raise PolicyDenied(
            f"The document expired at {expires_at.isoformat()}; write a new document "
            "at another path instead.",
            reason="document_not_active",
        )


def check_agent_may_overwrite(document: MemoryDocument) -> None:
    """An agent's write replaces only unreviewed text (DESIGN §9): reviewed
    memory at the path changes through a proposal a person decides, never by
    an overwrite that would also turn it into a draft."""
    if document.trust != Trust.AGENT_DRAFT:
        raise PolicyDenied(
            "Reviewed or person-written memory is at this path, and an agent's write "
            "may not replace it. Write to another path; to change shared memory, call "
            "memory_propose_promotion with this store and path as the target.",
            reason="document_reviewed",
        )


def check_write_quota(actor: Actor) -> None:
    """Per-run cap and per-minute rate of a service account, over every write.

    New versions, promotion proposals and deletion requests all count. A
    service account must name its run (X-Memory-Run): without one the run
    cap could not apply. Call inside the write's transaction: an advisory
    lock on the caller makes concurrent writes of one agent queue here, so
    they cannot overshoot the cap.
    """
    agent = actor.agent
    if not is_service_account(agent):
        return
    if not actor.run_id:
        raise InvalidInput(
            "Service accounts name their run in X-Memory-Run; the per-run write cap counts it.",
            fields={"X-Memory-Run": ["Required for service accounts on writes."]},
        )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtext('memory_write_quota'), %s)", [agent.pk]
        )
    cap = settings.MEMORY_RUN_WRITE_CAP
    limit = settings.MEMORY_RATE_LIMIT_PER_MINUTE
    run_writes, oldest_counted = _write_counts(
        agent.pk, actor.run_id, since=timezone.now() - RATE_WINDOW, limit=limit
    )
    if run_writes >= cap:
        raise RateLimited(
            f"This run has made its {cap} writes; start a new run to write more.",
            retry_after=3600,
        )
    if oldest_counted is not None:
        wait = (oldest_counted + RATE_WINDOW - timezone.now()).total_seconds()
        raise RateLimited(
            f"At most {limit} writes a minute; slow down.", retry_after=max(1, int(wait) + 1)
        )


_VERSIONS = MemoryVersion._meta.db_table
_REQUESTS = DreamReviewItem._meta.db_table


def _write_counts(agent_id: int, run_id: str, *, since, limit: int):
    """The run's writes, and the `limit`-th newest write since `since` (None
    while there are fewer): what the quota needs, in one statement after
    the lock (a statement sees what committed before it started, so the
    lock must come first, on its own). The run's writes are read by run,
    the author tested as no index can serve (`+ 0`): an author whose rows the
    statistics undercount would otherwise have the planner read every
    write of theirs and filter on the run (migration 0014). The window is
    not counted: its `limit`-th newest write says whether it is full."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT (SELECT count(*) FROM {_VERSIONS} WHERE run_id = %s AND author_id + 0 = %s)"  # noqa: S608
            f" + (SELECT count(*) FROM {_REQUESTS} WHERE run_id = %s AND proposed_by_id + 0 = %s),"
            f" (SELECT created_at FROM (SELECT created_at FROM {_VERSIONS}"
            f" WHERE author_id = %s AND created_at >= %s UNION ALL SELECT created_at"
            f" FROM {_REQUESTS} WHERE proposed_by_id = %s AND created_at >= %s) recent"
            " ORDER BY created_at DESC OFFSET %s LIMIT 1)",
            [run_id, agent_id, run_id, agent_id, agent_id, since, agent_id, since, limit - 1],
        )
        return cursor.fetchone()
