"""Django's PostgreSQL backend, pointed at the embedded server on first connect."""

from django.db import utils
from django.db.backends.postgresql import base

from config.database.server import ensure_server


class DatabaseWrapper(base.DatabaseWrapper):
    """Starts the embedded server lazily: commands that never touch the
    database (`--help`, `check`) never start one."""

    def get_connection_params(self):
        params = super().get_connection_params()
        address = ensure_server(
            self.settings_dict["EMBEDDED_DATA_DIR"],
            cleanup=self.settings_dict.get("EMBEDDED_CLEANUP", "stop"),
        )
        params["host"] = address.socket_dir
        params["port"] = address.port
        return params

    def ensure_connection(self):
        try:
            super().ensure_connection()
        except utils.OperationalError as error:
            if f'database "{self.settings_dict["NAME"]}" does not exist' not in str(error):
                raise
            self._create_own_database()
            super().ensure_connection()

    def _create_own_database(self) -> None:
        """Create the app's database the first time a data folder is used."""
        name = self.ops.quote_name(self.settings_dict["NAME"])
        with self._nodb_cursor() as cursor:
            try:
                cursor.execute(f"CREATE DATABASE {name}")
            except utils.ProgrammingError as error:
                # Another process of the app created it first.
                if "already exists" not in str(error):
                    raise
