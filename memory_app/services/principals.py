"""Accounts, API keys and system grants, as the operator commands set them up."""

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group, Permission
from django.db import transaction
from django.utils import timezone

from memory_app.models import ApiKey, GrantLevel, GroupMemoryPolicy, Principal, System, SystemGrant
from memory_app.permissions import memory_permissions_known
from memory_app.selectors.api_keys import api_key_lookup
from memory_app.selectors.turn import key_and_turn
from memory_app.services.stores import store_for_system

KEY_PREFIX = "ama_"


def api_key_hash(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class IssuedKey:
    key: ApiKey
    raw: str


def api_key_issue(*, user: AbstractBaseUser, name: str = "") -> IssuedKey:
    """Create a key; the raw value exists only in the return value."""
    raw = KEY_PREFIX + secrets.token_urlsafe(32)
    key = ApiKey.objects.create(user=user, name=name, prefix=raw[:12], key_sha256=api_key_hash(raw))
    return IssuedKey(key=key, raw=raw)


def api_key_authenticate(raw_key: str) -> AbstractBaseUser | None:
    """The active user owning an unrevoked key, or None."""
    key = api_key_find(raw_key)
    return key.user if key else None


@dataclass(frozen=True)
class TurnWanted:
    """A tool call's turn, to be read with its key: the call is the key
    user's own, in the conversation `external_id` (or none)."""

    external_id: str | None


def api_key_find(raw_key: str, *, turn: TurnWanted | None = None) -> ApiKey | None:
    """The unrevoked key of an active user, with its user; None otherwise.

    The same statement reads the user's memory permissions, which every tool
    call checks next (selectors/api_keys.py), and, with `turn`, the key
    user's turn in that conversation: `key.turn` (selectors/turn.py).
    """
    if turn is None:
        key = api_key_lookup(api_key_hash(raw_key))
    else:
        key, known = key_and_turn(api_key_hash(raw_key), turn.external_id)
    if key is None or not key.user.is_active:
        return None
    if turn is not None:
        key.turn = known
    memory_permissions_known(key.user, key)
    now = timezone.now()
    # Recording every use would put a write on every read call; a minute is enough.
    if key.last_used_at is None or (now - key.last_used_at).total_seconds() > 60:
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
    return key


def _permission(codename: str) -> Permission:
    return Permission.objects.get(content_type__app_label="memory_app", codename=codename)


@transaction.atomic
def principal_upsert(
    *,
    username: str,
    password: str | None = None,
    reviewer: bool = False,
    service_account: bool = False,
    act_on_behalf: bool = False,
    superuser: bool = False,
    teams: Iterable[str] = (),
) -> AbstractBaseUser:
    """Create or update a user; flags only ever add rights.

    Nothing is taken away by omitting a flag, so re-running a bootstrap
    script never silently demotes anyone; revoke in the admin.
    """
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(username=username)
    if password is not None:
        user.set_password(password)
    elif created:
        user.set_unusable_password()
    if superuser:
        user.is_superuser = True
        user.is_staff = True
    user.save()
    principal, _ = Principal.objects.get_or_create(user=user)
    if service_account and not principal.is_service_account:
        principal.is_service_account = True
        principal.save(update_fields=["is_service_account"])
    if reviewer:
        user.user_permissions.add(_permission("review_promotions"))
    if act_on_behalf:
        user.user_permissions.add(_permission("act_on_behalf"))
    for team in teams:
        group, _ = Group.objects.get_or_create(name=team)
        user.groups.add(group)
    return user


def principal_activate(user: AbstractBaseUser) -> bool:
    """Make the user able to sign in and use keys; True if it was inactive.

    `memory_import` creates the authors it does not know as inactive
    placeholders; an operator bootstrapping one of them with `memory_user`
    means to bring that person in, and a key of an inactive user would fail.
    """
    if user.is_active:
        return False
    user.is_active = True
    user.save(update_fields=["is_active"])
    return True


@transaction.atomic
def system_grant_set(*, system_slug: str, team: str, level: str) -> SystemGrant:
    """Grant `team` `level` on the system, creating system, store and team as needed."""
    if level not in GrantLevel.values:
        raise ValueError(f"level must be one of {', '.join(GrantLevel.values)}")
    system, _ = System.objects.get_or_create(slug=system_slug, defaults={"name": system_slug})
    store_for_system(system=system)
    group, _ = Group.objects.get_or_create(name=team)
    grant, _ = SystemGrant.objects.update_or_create(
        system=system, team=group, defaults={"level": level}
    )
    return grant


def system_grant_revoke(*, grant_id: int) -> bool:
    """Remove a team's grant on a system; True if there was one."""
    deleted, _ = SystemGrant.objects.filter(pk=grant_id).delete()
    return deleted > 0


def group_memory_policy_set(*, team: Group, read: bool, manage: bool) -> GroupMemoryPolicy:
    """Allow or revoke "read memory" and "manage memory" for a team's members.

    Takes effect on members' next request, in the tools and the pages alike.
    """
    policy, _ = GroupMemoryPolicy.objects.update_or_create(
        group=team, defaults={"can_read_memory": read, "can_manage_memory": manage}
    )
    return policy
