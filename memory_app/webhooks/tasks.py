"""The worker's side: dispatch every few seconds (beat), deliver with backoff."""

from celery import shared_task

from memory_app.webhooks.services import (
    deliveries_overdue,
    delivery_attempt,
    delivery_retry,
    webhooks_dispatch,
)


@shared_task
def dispatch_webhooks() -> int:
    """Queue the deliveries of new events, and again those whose message
    was lost (see deliveries_overdue)."""
    queued = [(delivery_id, 0) for delivery_id in webhooks_dispatch()] + deliveries_overdue()
    for delivery_id, attempts in queued:
        deliver_webhook.delay(delivery_id, attempts)
    return len(queued)


@shared_task(bind=True, max_retries=None)
def deliver_webhook(self, delivery_id: int, attempts: int | None = None) -> bool | None:
    """One attempt, the one after `attempts` (a copy of a message whose
    attempt was made sends nothing); a failure retries after `retry_delay`,
    and after MEMORY_WEBHOOK_MAX_ATTEMPTS attempts the delivery is marked
    failed. A destination the address check refuses fails at once: no retry
    would make it admissible."""
    delivered = delivery_attempt(delivery_id, attempts)
    if delivered is not False:
        return delivered
    retry = delivery_retry(delivery_id)
    if retry is None:
        return False
    raise self.retry(args=(delivery_id, retry.attempts), countdown=retry.countdown)
