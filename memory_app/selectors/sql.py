"""Pieces of the hand-written statements on the hot paths (api_keys.py,
turn.py): column lists and the memory-policy test from the models'
metadata, and model instances from the rows, so the SQL follows the
models without the ORM's per-call compiling.
"""

from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, connection

from memory_app.models import GroupMemoryPolicy


def columns(model, alias: str) -> list[str]:
    """Every concrete column of `model`, qualified by `alias`, in field order."""
    quote = connection.ops.quote_name
    return [f"{alias}.{quote(f.column)}" for f in model._meta.concrete_fields]


def policy_revokes(flag: str, user: str) -> str:
    """Whether a group of the user `user` (an SQL expression) revokes `flag`."""
    quote = connection.ops.quote_name
    groups = get_user_model()._meta.get_field("groups")
    membership = quote(groups.m2m_db_table())
    member, group = quote(groups.m2m_column_name()), quote(groups.m2m_reverse_name())
    policy = quote(GroupMemoryPolicy._meta.db_table)
    policy_group = quote(GroupMemoryPolicy._meta.get_field("group").column)
    return (
        f"EXISTS (SELECT 1 FROM {membership} m JOIN {policy} p ON p.{policy_group} = m.{group}"  # noqa: S608 - names from the models
        f" WHERE m.{member} = {user} AND NOT p.{quote(flag)})"
    )


def loaded(model, values, attnames: list[str] | None = None):
    """A model instance from a row's values, as the ORM would load it."""
    names = attnames or [f.attname for f in model._meta.concrete_fields]
    return model.from_db(DEFAULT_DB_ALIAS, names, values)
