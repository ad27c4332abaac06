import os
import signal
import sys
import tempfile
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from memory_app.errors import InvalidInput
from memory_app.services.export import documents_in_stores, export_lines

# How often a long run says how far it got.
PROGRESS_SECONDS = 5.0
# The status of a process SIGPIPE ended, as a shell reports it.
STOPPED_BY_SIGPIPE = 128 + signal.SIGPIPE


class Command(BaseCommand):
    help = (
        "Export memory as JSON Lines: every document with its full version history, "
        "source refs and review decisions, then an end line counting them. Writes to "
        "stdout unless --output is given."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--output", "-o", help="File to write (default: stdout); replaced once complete."
        )
        parser.add_argument(
            "--store",
            action="append",
            help="Only this store (a slug, or an API name such as user:alice); repeat for several.",
        )

    def handle(self, *args, **options):
        try:
            documents = documents_in_stores(options["store"])
        except InvalidInput as error:
            raise CommandError(error.detail) from error
        total = documents.count()
        if options["store"] and not total:
            raise CommandError("No documents in those stores.")
        report_at = time.monotonic() + PROGRESS_SECONDS

        def progress(done: int) -> None:
            nonlocal report_at
            if time.monotonic() >= report_at:
                self.stderr.write(f"exported {done} of {total} documents")
                report_at = time.monotonic() + PROGRESS_SECONDS

        lines = export_lines(documents, progress=progress)
        if options["output"]:
            written = self._export_to(Path(options["output"]), lines)
        else:
            written = _write_stdout(lines)
        self.stderr.write(f"exported {written} lines (header, stores, documents, end)")

    @staticmethod
    def _export_to(path: Path, lines) -> int:
        """Write to a temporary file beside `path`, renamed over it once complete:
        a run that fails or is interrupted leaves an earlier export as it was."""
        if path.is_dir():
            raise CommandError(f"{path} is a directory; name the file to write.")
        if not path.parent.is_dir():
            raise CommandError(f"{path.parent} is not a directory; create it first.")
        partial = None
        try:
            with tempfile.NamedTemporaryFile(
                "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False
            ) as out:
                partial = Path(out.name)
                written = _write(out, lines)
                out.flush()
                os.fsync(out.fileno())
            os.replace(partial, path)
        except OSError as error:
            raise CommandError(
                f"Could not write {path}: {error.strerror or error}. Nothing was replaced."
            ) from error
        finally:
            # Gone once renamed; otherwise what a failure or a signal left.
            if partial is not None:
                partial.unlink(missing_ok=True)
        return written


def _write_stdout(lines) -> int:
    """Write to stdout; a reader that left early (`memory_export | head -1`)
    ends the export quietly, with the status a shell gives a writer the
    pipe's signal stopped, instead of a traceback."""
    try:
        written = _write(sys.stdout, lines)
        sys.stdout.flush()
    except BrokenPipeError:
        # What is still buffered cannot be written either: without this,
        # Python's own flush at exit reports the broken pipe again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        raise SystemExit(STOPPED_BY_SIGPIPE) from None
    return written


def _write(out, lines) -> int:
    written = 0
    for line in lines:
        out.write(line + "\n")
        written += 1
    return written
