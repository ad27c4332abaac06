from django.core.management.base import BaseCommand, CommandError
from django.utils.text import slugify

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
        if slugify(slug) != slug or len(slug) > 100:
            raise CommandError("SYSTEM_SLUG must be lowercase letters, digits and '-' or '_'.")
        group = options["group"].strip()
        if not group or len(group) > 150:
            raise CommandError("GROUP must be 1 to 150 characters.")
        grant = system_grant_set(system_slug=slug, team=group, level=options["level"])
        self.stdout.write(f"{grant.team.name} has {grant.level} on {grant.system.slug}")
