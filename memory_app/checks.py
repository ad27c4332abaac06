"""System checks that need the database (run by `migrate` and `check --database`)."""

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register
from django.db import connections

# The PostgreSQL extension the documents' vectors and their index need.
VECTOR_EXTENSION = "vector"


# Whether the extension is on the server, is in this database, and whether
# the connected role could create it there (pgvector is not a trusted
# extension, so only a superuser may, unless a build marks it trusted).
_VECTOR_STATE = """
SELECT e.installed_version IS NOT NULL,
       r.rolsuper OR (v.trusted AND has_database_privilege(current_database(), 'CREATE'))
FROM pg_available_extensions e
JOIN pg_available_extension_versions v ON v.name = e.name AND v.version = e.default_version
JOIN pg_roles r ON r.rolname = current_user
WHERE e.name = %s
"""


@register(Tags.database)
def pgvector_check(app_configs, databases=None, **kwargs) -> list[Error | Warning]:
    """An external PostgreSQL where migrations cannot have pgvector is refused
    before `migrate` writes anything, rather than half-migrated and stopped by
    the first migration that creates the extension."""
    errors = []
    for alias in databases or ():
        with connections[alias].cursor() as cursor:
            cursor.execute(_VECTOR_STATE, [VECTOR_EXTENSION])
            state = cursor.fetchone()
            cursor.execute("SELECT current_database(), current_user")
            database, role = cursor.fetchone()
        if state is None:
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
            continue
        installed, creatable = state
        if not installed and not creatable:
            # A warning: managed servers let roles that are no superuser
            # create allow-listed extensions, which the catalog cannot tell.
            errors.append(
                Warning(
                    f"Database '{alias}' lacks the '{VECTOR_EXTENSION}' extension and "
                    f"role '{role}' may not create it.",
                    hint=f"Have a superuser run CREATE EXTENSION {VECTOR_EXTENSION}; in "
                    f"database '{database}' once, then migrate again (README, "
                    "'Running in production').",
                    id="memory_app.W003",
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
