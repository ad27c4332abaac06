from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from memory_app.models import MemoryDocument
from memory_app.selectors.chain import version_chain_verify
from memory_app.services.chain import chain_resign


class Command(BaseCommand):
    help = (
        "Recompute every document's keyed version chain; exit 1 if any link is broken. "
        "With --rekey, re-sign every intact history with the current MEMORY_CHAIN_KEY."
    )

    def add_arguments(self, parser):
        parser.add_argument("--store", help="Only this store (slug).")
        parser.add_argument(
            "--rekey",
            action="store_true",
            help="Re-sign intact histories still signed by a retired key (after a rotation).",
        )

    def handle(self, *args, **options):
        documents = MemoryDocument.objects.select_related("store").order_by("store__slug", "path")
        if options["store"]:
            documents = documents.filter(store__slug=options["store"])
        checked, broken, rekeyed = 0, [], 0
        for document in documents.iterator(chunk_size=500):
            checked += 1
            status = version_chain_verify(document)
            if not status.intact:
                broken.append(f"{document}: version {status.broken_at}: {status.problem}")
            elif options["rekey"] and status.retired_keys:
                rekeyed += self._rekey(document)
        for line in broken:
            self.stderr.write(line)
        if options["rekey"]:
            self.stdout.write(f"{rekeyed} documents re-signed with the current key.")
        if broken:
            raise CommandError(f"{len(broken)} of {checked} documents have a broken history.")
        self.stdout.write(f"{checked} documents verified; every history chain is intact.")

    @staticmethod
    def _rekey(document: MemoryDocument) -> int:
        """Re-sign one history, verified again under its lock (a write may have landed)."""
        with transaction.atomic():
            locked = MemoryDocument.objects.select_for_update().get(pk=document.pk)
            if not version_chain_verify(locked).intact:
                return 0
            chain_resign(locked)
        return 1
