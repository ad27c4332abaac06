"""What a principal is allowed to do with memory at all.

"read memory" and "manage memory" are on by default and revoked per group
(GroupMemoryPolicy); "review promotions" and "act on behalf" are ordinary
Django permissions granted to users or groups. Which stores and documents a
principal may see is the business of access.py; which writes the scope
rules allow is policy.py.
"""

from typing import Literal

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from memory_app.models import GroupMemoryPolicy, Principal

MemoryPermission = Literal["read_memory", "manage_memory"]

_CACHE_ATTR = "_memory_permission_cache"


def has_memory_permission(
    user: AbstractBaseUser | AnonymousUser, permission: MemoryPermission
) -> bool:
    """True unless one of the user's groups revokes `permission`.

    Cached on the user object, so a request pays at most one query.
    """
    if not user.is_authenticated or not user.is_active:
        return False
    if user.is_superuser:
        return True
    cache = getattr(user, _CACHE_ATTR, None)
    if cache is None:
        revoked = GroupMemoryPolicy.objects.filter(group__user=user).values_list(
            "can_read_memory", "can_manage_memory"
        )
        cache = {"read_memory": True, "manage_memory": True}
        for can_read, can_manage in revoked:
            cache["read_memory"] &= can_read
            cache["manage_memory"] &= can_manage
        setattr(user, _CACHE_ATTR, cache)
    return cache[permission]


def memory_permissions_known(user: AbstractBaseUser, row) -> None:
    """Fill `has_memory_permission`'s cache from a lookup that read whether the
    user's groups revoke each permission (`revokes_read_memory`,
    `revokes_manage_memory`: selectors/api_keys.py), saving its statement."""
    cache = {
        "read_memory": not row.revokes_read_memory,
        "manage_memory": not row.revokes_manage_memory,
    }
    setattr(user, _CACHE_ATTR, cache)


def can_review(user: AbstractBaseUser | AnonymousUser) -> bool:
    return user.is_authenticated and user.has_perm("memory_app.review_promotions")


def can_decide_reviews(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Deciding promotions needs "review promotions", and a person whose
    groups have not revoked "read memory": the queue shows the proposed text
    and the text it would replace, which such a person may not read anywhere
    else."""
    return (
        can_review(user)
        and not is_service_account(user)
        and has_memory_permission(user, "read_memory")
    )


def can_curate_some_store(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Could this person curate any store at all (policy.can_curate_store's
    preconditions): a person whose groups have revoked neither "manage
    memory" nor "read memory". Deciding a change shows the document, so
    "manage" alone does not let one read through the deletion requests what
    the document pages hide."""
    return (
        not is_service_account(user)
        and has_memory_permission(user, "read_memory")
        and has_memory_permission(user, "manage_memory")
    )


def can_act_on_behalf(user: AbstractBaseUser | AnonymousUser) -> bool:
    return user.is_authenticated and user.has_perm("memory_app.act_on_behalf")


def is_service_account(user: AbstractBaseUser | AnonymousUser) -> bool:
    if not user.is_authenticated:
        return False
    try:
        return user.principal.is_service_account
    except Principal.DoesNotExist:
        return False


def can_administer(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Staff manage teams, grants and memory access switches."""
    return user.is_authenticated and (user.is_staff or user.is_superuser)


def can_export_everything(user: AbstractBaseUser | AnonymousUser) -> bool:
    """A full export holds every private and conversation memory: superusers only."""
    return user.is_authenticated and user.is_superuser
