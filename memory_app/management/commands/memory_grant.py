from django.core.management.base import BaseCommand, CommandError
from django.utils.text import slugify

from memory_app.management.commands.memory_user import check_team_name, check_utf8
from memory_app.models import GrantLevel
from memory_app.services.principals import system_grant_set


class Command(BaseCommand):
    help = "Grant a team read or manage access to a system, creating both if needed."

    def add_arguments(self, parser):
        parser.add_argument("system_slug")
        parser.add_argument("group")
        parser.add_argument("level", choices=GrantLevel.values)

    def handle(self, *args, **options):
        slug = options["system_slug"]
        group = options["group"].strip()
        # As memory_user checks its --team: the same groups, named the same way.
        check_utf8(slug, group)
        if slugify(slug) != slug or len(slug) > 100:
            raise CommandError("SYSTEM_SLUG must be lowercase letters, digits and '-' or '_'.")
        check_team_name(group)
        grant = system_grant_set(system_slug=slug, team=group, level=options["level"])
        self.stdout.write(f"{grant.team.name} has {grant.level} on {grant.system.slug}")
