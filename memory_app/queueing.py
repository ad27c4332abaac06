"""Handing work to the Celery broker once a transaction commits.

What is sent this way is also found again by a periodic job (the
embedding backfill, the requeue of stale dream jobs), so a broker that
cannot take a message delays the work; it must not turn a request whose
write has already committed into an error.
"""

import logging
from collections.abc import Callable

from django.db import transaction
from kombu.exceptions import KombuError

logger = logging.getLogger(__name__)


def send_after_commit(send: Callable[[], object], *, what: str) -> None:
    """Call `send` after the current transaction commits; log a refusal by
    the broker instead of raising it."""

    def attempt() -> None:
        try:
            send()
        except (KombuError, OSError) as error:
            logger.warning(
                "The broker did not take %s; a periodic job will send it again.",
                what,
                extra={"error": type(error).__name__},
            )

    transaction.on_commit(attempt)
