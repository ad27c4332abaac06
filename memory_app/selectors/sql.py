"""Pieces of the hand-written statements on the hot paths (api_keys.py,
turn.py): column lists and the memory-policy test from the models'
metadata, and model instances from the rows, so the SQL follows the
models without the ORM's per-call compiling.
"""

from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, connection
from django.db.models.base import ModelState
from django.db.models.signals import post_init, pre_init

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
    """A model instance from a row's values (converted), as `Model.from_db`
    would load it, without `Model.__init__`.

    `__init__` sets the attributes one by one through their descriptors
    and sends two signals: 13 µs a document row, five times what filling
    the instance's dict costs, and a search builds some thirty. When
    something listens to the model's init signals, `from_db` builds it.
    tests/memory_app/test_candidate_rows.py holds the two to the same
    instance.
    """
    names = attnames or [f.attname for f in model._meta.concrete_fields]
    if pre_init.has_listeners(model) or post_init.has_listeners(model):
        return model.from_db(DEFAULT_DB_ALIAS, names, values)
    instance = model.__new__(model)
    instance.__dict__.update(zip(names, values, strict=True))
    instance._state = ModelState()
    instance._state.adding = False
    instance._state.db = DEFAULT_DB_ALIAS
    return instance
