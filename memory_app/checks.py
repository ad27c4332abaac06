"""System checks that need the database (run by `migrate` and `check --database`)."""

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register
from django.db import connections

# The PostgreSQL extension the documents' vectors and their index need.
VECTOR_EXTENSION = "vector"


@register(Tags.database)
def pgvector_check(app_configs, databases=None, **kwargs) -> list[Error]:
    """An external PostgreSQL without pgvector is refused before `migrate`
    writes anything, rather than half-migrated and stopped by the first
    migration that creates the extension."""
    errors = []
    for alias in databases or ():
        with connections[alias].cursor() as cursor:
            cursor.execute(
                "SELECT 1 FROM pg_available_extensions WHERE name = %s", [VECTOR_EXTENSION]
            )
            available = cursor.fetchone() is not None
        if not available:
            errors.append(
                Error(
                    f"Database '{alias}' has no pgvector: the '{VECTOR_EXTENSION}' "
                    "extension is not available on its server.",
                    hint="Install pgvector on that PostgreSQL (its packages are named "
                    "postgresql-<major>-pgvector on Debian), or leave DATABASE_URL unset "
                    "to use the embedded server, which has it.",
                    id="memory_app.E001",
                )
            )
    return errors


@register(Tags.database)
def database_role_check(app_configs, databases=None, **kwargs) -> list[Warning]:
    """A superuser can switch the history triggers off for a session.

    The keyed chain still detects a rewrite, but the app should not hold a
    credential that can make one quietly (README, "Running in production").
    """
    warnings = []
    for alias in databases or ():
        with connections[alias].cursor() as cursor:
            cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
            row = cursor.fetchone()
        if row and row[0]:
            warnings.append(
                Warning(
                    f"Database '{alias}' is used as a PostgreSQL superuser.",
                    hint="Connect as a role that owns the app's database but is not a "
                    "superuser (README, 'Running in production').",
                    id="memory_app.W001",
                )
            )
    return warnings


@register(Tags.security, deploy=True)
def chain_key_check(app_configs, **kwargs) -> list[Warning]:
    """A chain key generated into one host's data folder signs history no
    other host can verify: production sets MEMORY_CHAIN_KEY everywhere."""
    if not settings.MEMORY_CHAIN_KEY_GENERATED:
        return []
    return [
        Warning(
            "MEMORY_CHAIN_KEY is not set: the history chain is signed with a key "
            "generated into this host's data folder.",
            hint="Set MEMORY_CHAIN_KEY (32+ characters, from the secret store) to the same "
            'value on every web and worker host (README, "Running in production").',
            id="memory_app.W002",
        )
    ]
