from django.apps import AppConfig
from django.db import connections
from django.db.backends.signals import connection_created
from django.db.models.signals import m2m_changed, post_delete, post_migrate, post_save


def _seed_after_migrate(sender, using, **kwargs) -> None:
    """Seed once this app's tables exist (not after `migrate memory_app zero`)."""
    from memory_app.models import MemoryDocument
    from memory_app.services.seed import memory_seed

    if MemoryDocument._meta.db_table in connections[using].introspection.table_names():
        memory_seed(using=using)


def _invalidate_key_cache_on_changes() -> None:
    """What a cached API key lookup holds: the key, its user, the user's
    groups and their memory policies (services/key_cache.py)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from memory_app.models import ApiKey, GroupMemoryPolicy
    from memory_app.services.key_cache import key_cache_invalidate

    user_model = get_user_model()
    for model in (ApiKey, user_model, Group, GroupMemoryPolicy):
        for signal in (post_save, post_delete):
            signal.connect(key_cache_invalidate, sender=model, dispatch_uid=f"key-cache-{model}")
    m2m_changed.connect(
        key_cache_invalidate, sender=user_model.groups.through, dispatch_uid="key-cache-groups"
    )


class MemoryAppConfig(AppConfig):
    name = "memory_app"
    verbose_name = "Agent memory"

    def ready(self) -> None:
        from memory_app import checks  # noqa: F401  (registers the database checks)
        from memory_app.selectors.search import vector_search_session

        post_migrate.connect(_seed_after_migrate, sender=self, dispatch_uid="memory_seed")
        _invalidate_key_cache_on_changes()
        connection_created.connect(vector_search_session, dispatch_uid="vector_search_session")
