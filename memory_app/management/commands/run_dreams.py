import json

from django.core.management.base import BaseCommand, CommandError

from memory_app.dreams.kinds import KINDS
from memory_app.dreams.runner import dream_execute, dream_failed, stats_summary
from memory_app.models import DreamJob


class Command(BaseCommand):
    help = (
        "Run dream jobs now, in this process (no worker needed). "
        "Each run is recorded as a DreamJob like a scheduled one; "
        "while a worker runs the same kind, it waits for that run to end."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--kind",
            action="append",
            # The values: argparse lists the choices by repr (DreamKind.CANARY).
            choices=sorted(kind.value for kind in KINDS),
            help="A kind to run; repeat for several. Without it, every kind runs.",
        )

    def handle(self, *args, **options):
        failed = False
        for kind in options["kind"] or list(KINDS):
            job = DreamJob.objects.create(kind=kind)
            try:
                job = dream_execute(job.pk)
            except Exception as error:
                dream_failed(job.pk, error)
                self.stderr.write(f"{kind}: failed: {error}")
                failed = True
                continue
            summary = json.dumps(stats_summary(job.stats), default=str)
            self.stdout.write(f"{kind}: {job.status} {summary}")
        if failed:
            raise CommandError("Some dream jobs failed; see above.")
