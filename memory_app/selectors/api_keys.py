"""An API key's lookup: the key, its user, the user's Principal and memory
permissions in one statement.

Every API call runs it. Built by the ORM (a select_related and two EXISTS
annotations) it cost more to compile than to run, about 1.3 ms against
0.1 ms in PostgreSQL. The SQL below is written once per process, with
table and column names from the models' metadata.
"""

import functools

from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, connection

from memory_app.models import ApiKey, GroupMemoryPolicy, Principal


@functools.cache
def _statement() -> str:
    quote = connection.ops.quote_name
    user_model = get_user_model()
    groups = user_model._meta.get_field("groups")
    membership = quote(groups.m2m_db_table())
    member, group = quote(groups.m2m_column_name()), quote(groups.m2m_reverse_name())
    policy = quote(GroupMemoryPolicy._meta.db_table)
    policy_group = quote(GroupMemoryPolicy._meta.get_field("group").column)

    def columns(model, alias: str) -> list[str]:
        return [f"{alias}.{quote(f.column)}" for f in model._meta.concrete_fields]

    def revokes(flag: str) -> str:
        return (
            f"EXISTS (SELECT 1 FROM {membership} m JOIN {policy} p ON p.{policy_group} = m.{group}"
            f" WHERE m.{member} = u.{quote(user_model._meta.pk.column)} AND NOT p.{quote(flag)})"
        )

    selected = [
        *columns(ApiKey, "k"),
        *columns(user_model, "u"),
        *columns(Principal, "p"),
        revokes("can_read_memory"),
        revokes("can_manage_memory"),
    ]
    key_user = quote(ApiKey._meta.get_field("user").column)
    return (
        f"SELECT {', '.join(selected)} FROM {quote(ApiKey._meta.db_table)} k"
        f" JOIN {quote(user_model._meta.db_table)} u"
        f" ON u.{quote(user_model._meta.pk.column)} = k.{key_user}"
        f" LEFT JOIN {quote(Principal._meta.db_table)} p"
        f" ON p.{quote(Principal._meta.get_field('user').column)}"
        f" = u.{quote(user_model._meta.pk.column)}"
        f" WHERE k.{quote(ApiKey._meta.get_field('key_sha256').column)} = %s"
        f" AND k.{quote(ApiKey._meta.get_field('revoked_at').column)} IS NULL"
    )


def _loaded(model, values: tuple):
    return model.from_db(DEFAULT_DB_ALIAS, [f.attname for f in model._meta.concrete_fields], values)


def api_key_lookup(digest: str) -> ApiKey | None:
    """The unrevoked key whose SHA-256 is `digest`, with its user (and the
    user's Principal, or that there is none: `is_service_account` then asks
    nothing), and `revokes_read_memory` / `revokes_manage_memory` (whether
    one of the user's groups takes that permission away); None if there is
    none."""
    with connection.cursor() as cursor:
        cursor.execute(_statement(), [digest])
        row = cursor.fetchone()
    if row is None:
        return None
    user_model = get_user_model()
    split = len(ApiKey._meta.concrete_fields)
    end = split + len(user_model._meta.concrete_fields)
    principal_end = end + len(Principal._meta.concrete_fields)
    key = _loaded(ApiKey, row[:split])
    key.user = _loaded(user_model, row[split:end])
    principal = _loaded(Principal, row[end:principal_end]) if row[end] is not None else None
    # The reverse one-to-one's cache: a None there reads as "no Principal".
    user_model._meta.get_field("principal").set_cached_value(key.user, principal)
    if principal is not None:
        Principal._meta.get_field("user").set_cached_value(principal, key.user)
    key.revokes_read_memory, key.revokes_manage_memory = row[principal_end:]
    return key
