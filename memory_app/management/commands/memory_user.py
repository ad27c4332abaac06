from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from memory_app.models import ApiKey
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
        teams = [team.strip() for team in options["team"] if team.strip()]
        _check_arguments(username, teams, options["key_name"], options["password"])
        # One transaction: a refusal part-way leaves no user with half its rights.
        with transaction.atomic():
            user = principal_upsert(
                username=username,
                password=options["password"],
                reviewer=options["reviewer"],
                service_account=options["service_account"],
                act_on_behalf=options["act_on_behalf"],
                superuser=options["superuser"],
                teams=teams,
            )
            activated = principal_activate(user)
            issued = (
                None
                if options["no_key"]
                else api_key_issue(user=user, name=options["key_name"] or "memory_user")
            )
        if activated:
            self.stderr.write(
                f"User {user.get_username()} was inactive (an imported author or a "
                "deactivated account) and is now active."
            )
        if issued is None:
            self.stderr.write(f"User {user.get_username()} is ready.")
            return
        self.stderr.write(f"User {user.get_username()} is ready. New API key:")
        self.stdout.write(issued.raw)


def check_utf8(*texts: str) -> None:
    """Refuse an argument the shell passed as bytes that are not UTF-8: Python
    holds them as lone surrogates, which no database column or output can take."""
    for text in texts:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise CommandError("Arguments must be UTF-8 text.") from None


def check_team_name(team: str) -> None:
    """A team (a group) as the admin lists it: no tab, newline or other control
    that would hide or split its name."""
    limit = Group._meta.get_field("name").max_length
    if not 0 < len(team) <= limit or not team.isprintable():
        raise CommandError(f"A team name is 1 to {limit} printable characters.")


def _check_arguments(username: str, teams: list[str], key_name: str, password: str | None):
    """Refuse what the database or the login would refuse later, before any write."""
    check_utf8(username, key_name, password or "", *teams)
    if not username or len(username) > 150:
        raise CommandError("USERNAME must be 1 to 150 characters.")
    try:
        UnicodeUsernameValidator()(username)
    except ValidationError:
        raise CommandError(
            "USERNAME may hold letters, digits and @ . + - _ only, as on the login page."
        ) from None
    for team in teams:
        check_team_name(team)
    limit = ApiKey._meta.get_field("name").max_length
    if len(key_name) > limit:
        raise CommandError(f"--key-name is at most {limit} characters.")
    if password is not None:
        try:
            validate_password(password, user=get_user_model()(username=username))
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
