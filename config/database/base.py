"""Django's PostgreSQL backend, pointed at the embedded server on first connect."""

import psycopg
from django.db.backends.postgresql import base, operations

from config.database.roles import app_role_provision
from config.database.server import ensure_server

_provisioned: set[tuple[str, str]] = set()


class DatabaseOperations(operations.DatabaseOperations):
    def execute_sql_flush(self, sql_list):
        """Flush as the server's superuser: history tables refuse TRUNCATE
        from anyone else (migration 0006). Used by `flush` and by tests
        that commit, never by the app."""
        params = self.connection.get_connection_params()
        with psycopg.connect(
            host=params["host"],
            port=params["port"],
            dbname=params["dbname"],
            user=self.connection.settings_dict["EMBEDDED_SUPERUSER"],
        ) as conn:
            for statement in sql_list:
                conn.execute(statement)


class DatabaseWrapper(base.DatabaseWrapper):
    """Starts the embedded server lazily: commands that never touch the
    database (`--help`, `check`) never start one. Connects as the app role,
    created with its database on first use (config/database/roles.py)."""

    ops_class = DatabaseOperations

    def get_connection_params(self):
        params = super().get_connection_params()
        settings = self.settings_dict
        address = ensure_server(
            settings["EMBEDDED_DATA_DIR"],
            cleanup=settings.get("EMBEDDED_CLEANUP", "stop"),
            server_settings=settings.get("EMBEDDED_SERVER_SETTINGS"),
        )
        params["host"] = address.socket_dir
        params["port"] = address.port
        key = (settings["EMBEDDED_DATA_DIR"], params["dbname"])
        if key not in _provisioned:
            app_role_provision(
                host=address.socket_dir,
                port=address.port,
                superuser=settings["EMBEDDED_SUPERUSER"],
                role=params["user"],
                database=params["dbname"],
            )
            _provisioned.add(key)
        return params
