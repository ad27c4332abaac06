import time

from django.core.management.base import BaseCommand, CommandError

from memory_app.embeddings import usable_cores
from memory_app.services.embedding_backfill import embeddings_backfill
from memory_app.services.statistics import statistics_refresh


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
        for name in ("batch_size", "workers", "limit"):
            if options[name] is not None and options[name] < 1:
                raise CommandError(f"--{name.replace('_', '-')} must be at least 1.")

        started = time.monotonic()
        limit = options["limit"]

        def progress(done: int, stale: int) -> None:
            # The service counts every stale document; this run stops at the limit.
            total = stale if limit is None else min(stale, limit)
            rate = done / max(time.monotonic() - started, 1e-6)
            self.stdout.write(
                f"embedded {done} of {total} ({rate:.0f} documents/s, "
                f"{readable_duration((total - done) / rate)} left)"
            )

        done = embeddings_backfill(
            batch_size=options["batch_size"],
            limit=limit,
            progress=progress,
            workers=options["workers"],
        )
        if done:
            statistics_refresh()
        self.stdout.write(f"embedded {done} documents")


def readable_duration(seconds: float) -> str:
    """A remaining time as a person reads it: "45 s", "12 min", "2 h 5 min"."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"
