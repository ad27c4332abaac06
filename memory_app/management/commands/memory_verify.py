import time

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from memory_app.errors import InvalidInput
from memory_app.models import MemoryDocument
from memory_app.selectors.chain import version_chain_verify
from memory_app.services.chain import chain_resign
from memory_app.services.export import documents_in_stores

# How often a long run says how far it got.
PROGRESS_SECONDS = 5.0


class Command(BaseCommand):
    help = (
        "Recompute every document's keyed version chain and compare each head with its "
        "last version; exit 1 if any differs. With --rekey, re-sign every intact history "
        "with the current MEMORY_CHAIN_KEY."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--store", help="Only this store: its slug, or its API name (system:payments-api)."
        )
        parser.add_argument(
            "--rekey",
            action="store_true",
            help=(
                "Re-sign intact histories still signed by a retired key (after a rotation), "
                "and those signed before links held each version's record."
            ),
        )

    def handle(self, *args, **options):
        try:
            documents = documents_in_stores([options["store"]] if options["store"] else None)
        except InvalidInput as error:
            raise CommandError(error.detail) from error
        documents = (
            documents.select_related("store")
            .defer("embedding", "search_vector")
            .order_by("store__slug", "path")
        )
        total = documents.count()
        checked, broken, rekeyed = 0, [], 0
        report_at = time.monotonic() + PROGRESS_SECONDS
        for document in documents.iterator(chunk_size=500):
            checked += 1
            status = version_chain_verify(document)
            if not status.intact:
                # The head was read before its history: a write that landed
                # in between is no tampering. Read both again.
                status = version_chain_verify(documents.get(pk=document.pk))
            if not status.intact and options["rekey"] and self._rekey(document, records=False):
                rekeyed += 1
            elif not status.intact:
                broken.append(f"{document}: version {status.broken_at}: {status.problem}")
            elif options["rekey"] and status.retired_keys:
                rekeyed += self._rekey(document)
            if time.monotonic() >= report_at:
                self.stderr.write(f"verified {checked} of {total} documents")
                report_at = time.monotonic() + PROGRESS_SECONDS
        for line in broken:
            self.stderr.write(line)
        if options["rekey"]:
            self.stdout.write(f"{rekeyed} documents re-signed with the current key.")
        if broken:
            raise CommandError(f"{len(broken)} of {checked} documents have a broken history.")
        self.stdout.write(
            f"{checked} documents verified; every history chain is intact "
            "and every head is its last version."
        )

    @staticmethod
    def _rekey(document: MemoryDocument, *, records: bool = True) -> int:
        """Re-sign one history, verified again under its lock (a write may
        have landed). `records=False`: one whose links were signed before
        they held each version's record, signed again in full."""
        with transaction.atomic():
            locked = MemoryDocument.objects.select_for_update().get(pk=document.pk)
            if not version_chain_verify(locked, records=records).intact:
                return 0
            chain_resign(locked)
        return 1
