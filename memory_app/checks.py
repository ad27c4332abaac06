"""System checks that need the database (run by `migrate` and `check --database`)."""

from django.core.checks import Tags, Warning, register
from django.db import connections


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
