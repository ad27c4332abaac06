import sys
from contextlib import nullcontext

from django.core.management.base import BaseCommand, CommandError

from memory_app.models import MemoryDocument
from memory_app.services.export import export_lines


class Command(BaseCommand):
    help = (
        "Export memory as JSON Lines: every document with its full version history, "
        "source refs and review decisions. Writes to stdout unless --output is given."
    )

    def add_arguments(self, parser):
        parser.add_argument("--output", "-o", help="File to write (default: stdout).")
        parser.add_argument(
            "--store", action="append", help="Only this store's slug; repeat for several."
        )

    def handle(self, *args, **options):
        documents = MemoryDocument.objects.all()
        if options["store"]:
            documents = documents.filter(store__slug__in=options["store"])
            if not documents.exists():
                raise CommandError("No documents in those stores.")
        path = options["output"]
        target = open(path, "w", encoding="utf-8") if path else nullcontext(sys.stdout)  # noqa: SIM115
        written = 0
        with target as out:
            for line in export_lines(documents):
                out.write(line + "\n")
                written += 1
        self.stderr.write(f"exported {written} lines (header, stores, documents)")
