from django.core.management.base import BaseCommand

from memory_app.services.seed import memory_seed


class Command(BaseCommand):
    help = "Create the workspace stores and convention documents if missing (idempotent)."

    def handle(self, *args, **options):
        report = memory_seed()
        if report.created:
            for ref in report.created:
                self.stdout.write(f"created {ref}")
        else:
            self.stdout.write("seed already present; nothing changed")
