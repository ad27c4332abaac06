from django.core.management.base import BaseCommand, CommandError

from memory_app.services.principals import api_key_issue, principal_activate, principal_upsert


class Command(BaseCommand):
    help = (
        "Create or update a user, activate it if inactive, and print a new API key as "
        "the last line (unless --no-key). Flags only add rights; revoke them in the admin."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--password", help="Set this password (for browser login).")
        parser.add_argument("--reviewer", action="store_true", help="May decide promotions.")
        parser.add_argument(
            "--service-account", action="store_true", help="An unattended agent (write caps)."
        )
        parser.add_argument(
            "--act-on-behalf", action="store_true", help="May send X-Memory-On-Behalf-Of."
        )
        parser.add_argument("--superuser", action="store_true", help="Full rights and the admin.")
        parser.add_argument("--team", action="append", default=[], help="Add to this team.")
        parser.add_argument("--key-name", default="", help="A label for the new key.")
        parser.add_argument(
            "--no-key",
            action="store_true",
            help="Issue no API key (a login for the browser only).",
        )

    def handle(self, *args, **options):
        username = options["username"].strip()
        if not username or len(username) > 150:
            raise CommandError("USERNAME must be 1 to 150 characters.")
        user = principal_upsert(
            username=username,
            password=options["password"],
            reviewer=options["reviewer"],
            service_account=options["service_account"],
            act_on_behalf=options["act_on_behalf"],
            superuser=options["superuser"],
            teams=[team.strip() for team in options["team"] if team.strip()],
        )
        if principal_activate(user):
            self.stderr.write(
                f"User {user.get_username()} was inactive (an imported author or a "
                "deactivated account) and is now active."
            )
        if options["no_key"]:
            self.stderr.write(f"User {user.get_username()} is ready.")
            return
        issued = api_key_issue(user=user, name=options["key_name"] or "memory_user")
        self.stderr.write(f"User {user.get_username()} is ready. New API key:")
        self.stdout.write(issued.raw)
