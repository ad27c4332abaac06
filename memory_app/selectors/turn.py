"""The conversation of a tool call and the stores its turn may draw on, in
one statement; with the caller's API key, when the call is its key's own.

Every tool call naming X-Memory-Conversation looks the conversation up
(with whether the principal takes part in it), and memory_search and
memory_context then need the stores the turn may read: workspace stores,
the systems the principal's teams hold a grant on, their own store and the
conversation's. Built by the ORM these were two statements whose Python
(compiling the OR of subqueries, instantiating related rows) cost several
times their time in PostgreSQL. The SQL below is written once per process,
with table and column names from the models' metadata; it reads the
grants, the participants and the group policies afresh on every call, so a
revoked grant, a removed participant or a revoked permission takes effect
on the next call. The statement is prepared once per connection
(selectors/prepared.py). Which stores count is access.py's rule (`store_read_q`
and `context_stores_q`); `tests/memory_app/api/test_turn_scope.py` holds
the two to the same answers.
"""

import functools
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection

from memory_app.models import (
    ApiKey,
    Conversation,
    MemoryStore,
    Scope,
    System,
    SystemGrant,
)
from memory_app.selectors.api_keys import key_from_row, key_select, key_width
from memory_app.selectors.prepared import Prepared, execute_prepared, prepared
from memory_app.selectors.sql import columns, loaded, policy_revokes


@dataclass(frozen=True)
class TurnRows:
    """What the statement found: the conversation named (None if there is
    none), whether the user takes part in it, the stores in scope by id,
    and whether the user's groups revoke reading or managing memory."""

    conversation: Conversation | None
    joined: bool
    stores: dict[int, MemoryStore]
    revokes_read_memory: bool
    revokes_manage_memory: bool


@dataclass(frozen=True)
class KnownTurn:
    """A turn read with its caller's API key (`key_and_turn`): the rows
    hold for the key's user and the conversation `external_id` only."""

    user_id: int
    external_id: str | None
    rows: TurnRows


def _scope_sql(*, user: str, superuser: str, policy: str, lead: str = "", first: str = "") -> str:
    """The turn's statement for the user the SQL expression `user` names.

    `policy` is a query giving `revokes_read` and `revokes_manage` for that
    user; `lead` comes first among the CTEs and `first` first among the
    selected columns (the key's, when the statement also finds the key).
    """
    quote = connection.ops.quote_name
    user_model = get_user_model()
    groups = user_model._meta.get_field("groups")
    membership = quote(groups.m2m_db_table())
    member, group = quote(groups.m2m_column_name()), quote(groups.m2m_reverse_name())
    participants = Conversation._meta.get_field("participants")
    joins = quote(participants.m2m_db_table())
    joined_conversation = quote(participants.m2m_column_name())
    joined_user = quote(participants.m2m_reverse_name())
    grant = SystemGrant._meta
    store = MemoryStore._meta

    def column(meta, name: str) -> str:
        return quote(meta.get_field(name).column)

    stores, scope = quote(store.db_table), column(store, "scope")
    # One branch per kind of store, each on its own index but the workspace
    # one (few rows); a conversation's store only if the user takes part.
    in_scope = (
        f"SELECT s.id FROM {stores} s WHERE s.{scope} = %(workspace)s"  # noqa: S608 - names from the models
        f" UNION ALL SELECT s.id FROM {stores} s"
        f" WHERE s.{column(store, 'owner')} = {user} AND s.{scope} = %(user_scope)s"
        f" UNION ALL SELECT s.id FROM {stores} s"
        f" WHERE s.{scope} = %(system_scope)s AND s.{column(store, 'system')} IN"
        f" (SELECT g.{column(grant, 'system')} FROM {quote(grant.db_table)} g"
        f" JOIN {membership} m ON m.{group} = g.{column(grant, 'team')}"
        f" WHERE m.{member} = {user})"
        f" UNION ALL SELECT s.id FROM {stores} s JOIN conv"
        f" ON s.{column(store, 'conversation')} = conv.id AND conv.joined"
        f" WHERE s.{scope} = %(conversation_scope)s"
    )
    conversation = Conversation._meta
    selected = [
        *columns(Conversation, "conv"),
        "conv.joined",
        "policy.revokes_read",
        "policy.revokes_manage",
        *columns(MemoryStore, "s"),
        f"o.{quote(user_model._meta.get_field(user_model.USERNAME_FIELD).column)}",
        *columns(System, "sy"),
    ]
    return (
        f"WITH {lead}conv AS MATERIALIZED (SELECT {', '.join(columns(Conversation, 'c'))},"  # noqa: S608 - names from the models
        f" EXISTS (SELECT 1 FROM {joins} j WHERE j.{joined_conversation} = c.id"
        f" AND j.{joined_user} = {user}) AS joined"
        f" FROM {quote(conversation.db_table)} c"
        f" WHERE c.{column(conversation, 'external_id')} = %(conversation)s),"
        f" policy AS ({policy})"
        f" SELECT {first}{', '.join(selected)} FROM policy LEFT JOIN conv ON true"
        f" LEFT JOIN ({stores} s"
        f" LEFT JOIN {quote(user_model._meta.db_table)} o"
        f" ON o.{quote(user_model._meta.pk.column)} = s.{column(store, 'owner')}"
        f" LEFT JOIN {quote(System._meta.db_table)} sy ON sy.id = s.{column(store, 'system')})"
        f" ON ({superuser} OR NOT policy.revokes_read) AND s.id IN ({in_scope})"
    )


@functools.cache
def _statement() -> Prepared:
    return prepared(
        "memory_turn_scope",
        _scope_sql(
            user="%(user)s",
            superuser="%(superuser)s",
            policy=f"SELECT {policy_revokes('can_read_memory', '%(user)s')} AS revokes_read,"
            f" {policy_revokes('can_manage_memory', '%(user)s')} AS revokes_manage",
        ),
    )


@functools.cache
def _keyed_statement() -> Prepared:
    """The key's lookup and its user's turn: no key, no row. The key's row
    is the `policy` the turn reads."""
    return prepared(
        "memory_key_turn_scope",
        _scope_sql(
            user="(SELECT key_user FROM key)",
            superuser="policy.key_superuser",
            policy="SELECT * FROM key",
            lead=f"key AS MATERIALIZED ({key_select()}), ",
            first="policy.*, ",
        ),
    )


_SCOPES = {
    "workspace": Scope.WORKSPACE,
    "user_scope": Scope.USER,
    "system_scope": Scope.SYSTEM,
    "conversation_scope": Scope.CONVERSATION,
}


def turn_rows(*, user: AbstractBaseUser, external_id: str | None) -> TurnRows:
    """The conversation `external_id` names and the stores `user`'s turn may draw on."""
    with connection.cursor() as cursor:
        execute_prepared(
            cursor,
            _statement(),
            {
                "user": user.pk,
                "conversation": external_id,
                "superuser": bool(user.is_superuser),
                **_SCOPES,
            },
        )
        return _turn(cursor.fetchall(), 0)


def key_and_turn(digest: str, external_id: str | None) -> tuple[ApiKey | None, KnownTurn | None]:
    """The unrevoked key whose SHA-256 is `digest` (as `api_key_lookup`) and
    its user's turn in the conversation `external_id`, in one statement:
    a tool call's identity, conversation and stores in one round trip."""
    with connection.cursor() as cursor:
        execute_prepared(
            cursor, _keyed_statement(), {"digest": digest, "conversation": external_id, **_SCOPES}
        )
        rows = cursor.fetchall()
    if not rows:
        return None, None
    key = key_from_row(rows[0])
    return key, KnownTurn(key.user.pk, external_id, _turn(rows, key_width()))


def _turn(rows: list[tuple], start: int) -> TurnRows:
    """The turn from the statement's rows, its columns beginning at `start`."""
    user_model = get_user_model()
    conversation_width = len(Conversation._meta.concrete_fields)
    store_width = len(MemoryStore._meta.concrete_fields)
    first = rows[0][start:]
    conversation = None
    if first[0] is not None:
        conversation = loaded(Conversation, first[:conversation_width])
        conversation.joined = first[conversation_width]
    revokes_read, revokes_manage = first[conversation_width + 1 : conversation_width + 3]
    stores = {}
    start += conversation_width + 3
    for row in rows:
        values = row[start:]
        if values[0] is None:
            continue
        store = loaded(MemoryStore, values[:store_width])
        username, system = values[store_width], values[store_width + 1 :]
        if store.scope == Scope.USER:
            store.owner = loaded(user_model, (store.owner_id, username), _owner_fields())
        elif store.scope == Scope.SYSTEM:
            store.system = loaded(System, system)
        elif store.scope == Scope.CONVERSATION:
            store.conversation = conversation
        stores[store.pk] = store
    return TurnRows(
        conversation=conversation,
        joined=bool(conversation and conversation.joined),
        stores=stores,
        revokes_read_memory=revokes_read,
        revokes_manage_memory=revokes_manage,
    )


def _owner_fields() -> list[str]:
    """What a store's owner is loaded with: how store_ref names it."""
    user_model = get_user_model()
    return [user_model._meta.pk.attname, user_model.USERNAME_FIELD]
