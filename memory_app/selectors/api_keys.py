"""An API key's lookup: the key, its user, the user's Principal and memory
permissions in one statement.

Every API call runs it. Built by the ORM (a select_related and two EXISTS
annotations) it cost more to compile than to run, about 1.3 ms against
0.1 ms in PostgreSQL. The SQL below is written once per process, with
table and column names from the models' metadata, and prepared once per
connection (selectors/prepared.py). A tool call that resolves its turn
runs it inside the turn's statement instead (selectors/turn.py).
"""

import functools

from django.contrib.auth import get_user_model
from django.db import connection

from memory_app.models import ApiKey, Principal
from memory_app.selectors.prepared import Prepared, execute_prepared, prepared
from memory_app.selectors.sql import columns, loaded, policy_revokes


@functools.cache
def key_select() -> str:
    """The key's row for the digest `%(digest)s`: the key's, its user's and
    the Principal's columns, then `key_user`, `key_superuser`,
    `revokes_read` and `revokes_manage` (`key_from_row` reads it)."""
    quote = connection.ops.quote_name
    user_model = get_user_model()
    user_id = f"u.{quote(user_model._meta.pk.column)}"
    selected = [
        *columns(ApiKey, "k"),
        *columns(user_model, "u"),
        *columns(Principal, "p"),
        f"{user_id} AS key_user",
        f"u.{quote(user_model._meta.get_field('is_superuser').column)} AS key_superuser",
        f"{policy_revokes('can_read_memory', user_id)} AS revokes_read",
        f"{policy_revokes('can_manage_memory', user_id)} AS revokes_manage",
    ]
    key_user = quote(ApiKey._meta.get_field("user").column)
    return (
        f"SELECT {', '.join(selected)} FROM {quote(ApiKey._meta.db_table)} k"
        f" JOIN {quote(user_model._meta.db_table)} u ON {user_id} = k.{key_user}"
        f" LEFT JOIN {quote(Principal._meta.db_table)} p"
        f" ON p.{quote(Principal._meta.get_field('user').column)} = {user_id}"
        f" WHERE k.{quote(ApiKey._meta.get_field('key_sha256').column)} = %(digest)s"
        f" AND k.{quote(ApiKey._meta.get_field('revoked_at').column)} IS NULL"
    )


def key_width() -> int:
    """How many columns of a row `key_select` makes."""
    user_model = get_user_model()
    return sum(len(m._meta.concrete_fields) for m in (ApiKey, user_model, Principal)) + 4


@functools.cache
def _statement() -> Prepared:
    return prepared("memory_api_key_lookup", key_select())


def api_key_lookup(digest: str) -> ApiKey | None:
    """The unrevoked key whose SHA-256 is `digest`, with its user (and the
    user's Principal, or that there is none: `is_service_account` then asks
    nothing), and `revokes_read_memory` / `revokes_manage_memory` (whether
    one of the user's groups takes that permission away); None if there is
    none."""
    with connection.cursor() as cursor:
        execute_prepared(cursor, _statement(), {"digest": digest})
        row = cursor.fetchone()
    return None if row is None else key_from_row(row)


def key_from_row(row) -> ApiKey:
    """The key, its user and their Principal from a row `key_select` began."""
    user_model = get_user_model()
    split = len(ApiKey._meta.concrete_fields)
    end = split + len(user_model._meta.concrete_fields)
    principal_end = end + len(Principal._meta.concrete_fields)
    key = loaded(ApiKey, row[:split])
    key.user = loaded(user_model, row[split:end])
    principal = loaded(Principal, row[end:principal_end]) if row[end] is not None else None
    # The reverse one-to-one's cache: a None there reads as "no Principal".
    user_model._meta.get_field("principal").set_cached_value(key.user, principal)
    if principal is not None:
        Principal._meta.get_field("user").set_cached_value(principal, key.user)
    key.revokes_read_memory, key.revokes_manage_memory = row[principal_end + 2 : principal_end + 4]
    return key
