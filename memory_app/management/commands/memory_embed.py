from django.core.management.base import BaseCommand, CommandError

from memory_app.embeddings import usable_cores
from memory_app.services.embedding_backfill import embeddings_backfill


class Command(BaseCommand):
    help = "Embed documents whose embedding is missing or from another model."

    def add_arguments(self, parser):
        parser.add_argument("--batch-size", type=int, default=64)
        parser.add_argument("--limit", type=int, default=None, help="Stop after this many.")
        parser.add_argument(
            "--workers",
            type=int,
            default=usable_cores(),
            help="Threads running the model at once (default: one per usable core).",
        )

    def handle(self, *args, **options):
        for name in ("batch_size", "workers"):
            if options[name] < 1:
                raise CommandError(f"--{name.replace('_', '-')} must be at least 1.")

        def progress(done: int, total: int) -> None:
            self.stdout.write(f"embedded {done} of {total}")

        done = embeddings_backfill(
            batch_size=options["batch_size"],
            limit=options["limit"],
            progress=progress,
            workers=options["workers"],
        )
        self.stdout.write(f"embedded {done} documents")
