from django.core.management.base import BaseCommand

from memory_app.services.embedding_backfill import embeddings_backfill


class Command(BaseCommand):
    help = "Embed documents whose embedding is missing or from another model."

    def add_arguments(self, parser):
        parser.add_argument("--batch-size", type=int, default=64)
        parser.add_argument("--limit", type=int, default=None, help="Stop after this many.")

    def handle(self, *args, **options):
        def progress(done: int, total: int) -> None:
            self.stdout.write(f"embedded {done} of {total}")

        done = embeddings_backfill(
            batch_size=options["batch_size"], limit=options["limit"], progress=progress
        )
        self.stdout.write(f"embedded {done} documents")
