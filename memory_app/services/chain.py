"""Rewriting history on purpose: after a redaction, and to retire a chain key.

Both re-sign links with the current key, which only the app holds; a
database credential alone cannot, so any other rewrite fails `memory_verify`.
"""

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

from memory_app.hashing import chain_key_current, chain_relinked
from memory_app.models import MemoryDocument, MemoryVersion
from memory_app.selectors.chain import CHAIN_FIELDS


@contextmanager
def history_rewrite() -> Iterator[None]:
    """Let the current transaction update history rows (migration 0006).

    The trigger still refuses changes to who, when, which version and what
    kind of change, and every DELETE and TRUNCATE. The setting is local to
    the transaction, so a failure inside rolls it back with everything else.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('memory.history_rewrite', 'on', true)")
    yield
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('memory.history_rewrite', 'off', true)")


def chain_resign(document: MemoryDocument) -> int:
    """Re-sign the document's whole chain with the current key; rows changed.

    The caller holds the document's row lock inside a transaction and has
    verified the history first (a re-signed forgery would verify).
    """
    key = chain_key_current()
    rows = document.versions.order_by("version").only(*CHAIN_FIELDS).prefetch_related("source_refs")
    changed = 0
    with history_rewrite():
        for row, link in chain_relinked(rows, key):
            link["chain_key_id"] = key.id
            if any(getattr(row, name) != value for name, value in link.items()):
                MemoryVersion.objects.filter(pk=row.pk).update(**link)
                changed += 1
    return changed
