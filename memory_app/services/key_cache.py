"""API key lookups kept a short while in the cache all processes share.

Every API call authenticates; with this cache a known key costs one cache
read instead of a statement. Each entry carries the generation it was read
under, and any change to a key, a user, a group, a group's members or its
memory policy starts a new generation when its transaction commits: the
next request after a revocation, a deactivation or a policy change reads
the database again. Changes that bypass model signals (QuerySet.update,
SQL) are bounded only by MEMORY_API_KEY_CACHE_SECONDS.

Off by default unless the cache is shared (MEMORY_CACHE_URL, settings.py):
a cache of one process would not hear of a revocation made in another. The
password hash never enters the cache.
"""

import uuid

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, transaction

from memory_app.models import ApiKey

GENERATION = "api-key:generation"
_PERMISSIONS = ("revokes_read_memory", "revokes_manage_memory")


def _entry_name(digest: str) -> str:
    return f"api-key:{digest}"


def _fields(instance, skip: frozenset[str] = frozenset()) -> dict:
    return {
        f.attname: getattr(instance, f.attname)
        for f in instance._meta.concrete_fields
        if f.attname not in skip
    }


def _rebuild(entry: dict) -> ApiKey:
    """The key and its user as the lookup statement loads them; the user's
    password is deferred (read from the database if anything asks)."""
    user_model = get_user_model()
    user = user_model.from_db(DEFAULT_DB_ALIAS, list(entry["user"]), entry["user"].values())
    key = ApiKey.from_db(DEFAULT_DB_ALIAS, list(entry["key"]), entry["key"].values())
    key.user = user
    for name in _PERMISSIONS:
        setattr(key, name, entry[name])
    return key


def key_cache_get(digest: str) -> tuple[ApiKey | None, str | None]:
    """The cached key of `digest`, if its entry is of the current generation,
    and that generation (to stamp an entry made from a fresh lookup)."""
    if not settings.MEMORY_API_KEY_CACHE_SECONDS:
        return None, None
    found = cache.get_many([GENERATION, _entry_name(digest)])
    generation = found.get(GENERATION)
    if generation is None:
        cache.add(GENERATION, uuid.uuid4().hex, timeout=None)
        return None, cache.get(GENERATION)
    entry = found.get(_entry_name(digest))
    if entry is None or entry["generation"] != generation:
        return None, generation
    return _rebuild(entry), generation


def key_cache_put(digest: str, key: ApiKey, generation: str | None) -> None:
    """Keep `key`, looked up under `generation` (read before the lookup, so a
    change committed meanwhile makes the entry stale at once)."""
    if generation is None or not settings.MEMORY_API_KEY_CACHE_SECONDS:
        return
    entry = {
        "generation": generation,
        "key": _fields(key),
        "user": _fields(key.user, skip=frozenset({"password"})),
        **{name: getattr(key, name) for name in _PERMISSIONS},
    }
    cache.set(_entry_name(digest), entry, settings.MEMORY_API_KEY_CACHE_SECONDS)


def _new_generation() -> None:
    cache.set(GENERATION, uuid.uuid4().hex, timeout=None)


def key_cache_invalidate(sender, **kwargs) -> None:
    """Signal receiver: once the change commits, every entry is stale."""
    if settings.MEMORY_API_KEY_CACHE_SECONDS:
        transaction.on_commit(_new_generation)
