from django.apps import AppConfig
from django.db import connections
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate


def _seed_after_migrate(sender, using, **kwargs) -> None:
    """Seed once this app's tables exist (not after `migrate memory_app zero`)."""
    from memory_app.models import MemoryDocument
    from memory_app.services.seed import memory_seed

    if MemoryDocument._meta.db_table in connections[using].introspection.table_names():
        memory_seed(using=using)


class MemoryAppConfig(AppConfig):
    name = "memory_app"
    verbose_name = "Agent memory"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from memory_app import checks  # noqa: F401  (registers the database checks)
        from memory_app.login_attempts import clear_own_failures
        from memory_app.selectors.search import search_session

        post_migrate.connect(_seed_after_migrate, sender=self, dispatch_uid="memory_seed")
        connection_created.connect(search_session, dispatch_uid="search_session")
        user_logged_in.connect(clear_own_failures, dispatch_uid="clear_own_failures")
