from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from config.database.server import ensure_server, release_if_unused, server_status, stop_server


class Command(BaseCommand):
    help = "Status, start or stop of the embedded PostgreSQL (when DATABASE_URL is unset)."
    # System checks may open a connection, which would start the server.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument(
            "action",
            choices=["status", "start", "stop", "release"],
            help="release: stop it only if no live process is using it",
        )

    def handle(self, *args, **options):
        database = settings.DATABASES["default"]
        data_dir = database.get("EMBEDDED_DATA_DIR")
        if not data_dir:
            raise CommandError("DATABASE_URL is set: the database is not the embedded one.")
        action = options["action"]
        if action == "start":
            # Started without cleanup, so it outlives this command.
            address = ensure_server(
                data_dir,
                cleanup=None,
                server_settings=database.get("EMBEDDED_SERVER_SETTINGS"),
            )
            self.stdout.write(f"running, socket {address.socket_dir}")
        elif action == "release":
            # Not stopped here: still in use, or stopped already by its last user.
            self.stdout.write("stopped" if release_if_unused(data_dir) else server_status(data_dir))
        elif action == "stop":
            self.stdout.write("stopped" if stop_server(data_dir) else "was not running")
        else:
            self.stdout.write(server_status(data_dir))
