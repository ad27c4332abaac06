import sys

from django.core.management.base import BaseCommand, CommandError

from memory_app.errors import InvalidInput
from memory_app.services.importing import MODES, memory_import
from memory_app.services.statistics import statistics_refresh


class Command(BaseCommand):
    help = (
        "Import a memory_export file (JSON Lines). All or nothing: a malformed line or a "
        "history whose hash chain does not verify aborts the whole import."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="The export file, or - for stdin.")
        parser.add_argument("--mode", choices=MODES, default="skip")
        parser.add_argument(
            "--map-store",
            action="append",
            default=[],
            metavar="FROM=TO",
            help="Import store FROM as store TO (store names as in the API); repeatable.",
        )

    def handle(self, *args, **options):
        store_map = {}
        for pair in options["map_store"]:
            source, sep, target = pair.partition("=")
            if not sep or not source or not target:
                raise CommandError(f"--map-store needs FROM=TO, not {pair!r}")
            store_map[source] = target
        try:
            if options["path"] == "-":
                report = memory_import(sys.stdin, mode=options["mode"], store_map=store_map)
            else:
                with open(options["path"], encoding="utf-8") as lines:
                    report = memory_import(lines, mode=options["mode"], store_map=store_map)
        except OSError as error:
            raise CommandError(str(error)) from error
        except InvalidInput as error:
            raise CommandError(error.detail) from error
        if report.created or report.overwritten:
            statistics_refresh()
        self.stdout.write(
            f"created {report.created}, overwritten {report.overwritten}, "
            f"skipped {report.skipped}, review decisions {report.reviews}, "
            f"conflicts {len(report.conflicts)}"
        )
        for conflict in report.conflicts[:50]:
            self.stdout.write(f"  conflict: {conflict}")
