import sys
import time
from collections.abc import Iterable, Iterator

from django.core.management.base import BaseCommand, CommandError

from memory_app.errors import InvalidInput
from memory_app.services.importing import MODES, memory_import
from memory_app.services.statistics import statistics_refresh

# How often a long run says how far it got.
PROGRESS_SECONDS = 5.0


class Command(BaseCommand):
    help = (
        "Import a memory_export file (JSON Lines). All or nothing: a malformed line, a "
        "history whose hash chain does not verify or a file cut short aborts the whole import."
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
        # Bytes: the service decodes each line, so a line that is not UTF-8
        # is refused by its number, not quoted.
        try:
            if options["path"] == "-":
                report = memory_import(
                    self._counted(sys.stdin.buffer), mode=options["mode"], store_map=store_map
                )
            else:
                with open(options["path"], "rb") as lines:
                    report = memory_import(
                        self._counted(lines), mode=options["mode"], store_map=store_map
                    )
        except OSError as error:
            raise CommandError(f"Could not read {options['path']}: {error.strerror}.") from error
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

    def _counted(self, lines: Iterable[bytes]) -> Iterator[bytes]:
        """The lines, saying on stderr every PROGRESS_SECONDS how many were read."""
        report_at = time.monotonic() + PROGRESS_SECONDS
        for number, line in enumerate(lines, start=1):
            yield line
            # Asked for the next line: this one is checked and written.
            if time.monotonic() >= report_at:
                self.stderr.write(f"read {number} lines")
                report_at = time.monotonic() + PROGRESS_SECONDS
