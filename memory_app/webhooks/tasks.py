"""The worker's side: dispatch every few seconds (beat), deliver with backoff."""

from celery import shared_task
from django.conf import settings

from memory_app.webhooks.services import delivery_attempt, delivery_give_up, webhooks_dispatch


@shared_task
def dispatch_webhooks() -> int:
    created = webhooks_dispatch()
    for delivery_id in created:
        deliver_webhook.delay(delivery_id)
    return len(created)


@shared_task(bind=True, max_retries=None)
def deliver_webhook(self, delivery_id: int) -> bool | None:
    """One attempt; a failure retries after `retry_delay`, and after
    MEMORY_WEBHOOK_MAX_ATTEMPTS attempts the delivery is marked failed. A
    destination the address check refuses fails at once: no retry would
    make it admissible."""
    delivered = delivery_attempt(delivery_id)
    if delivered is not False:
        return delivered
    if self.request.retries + 1 >= settings.MEMORY_WEBHOOK_MAX_ATTEMPTS:
        delivery_give_up(delivery_id)
        return False
    raise self.retry(countdown=retry_delay(self.request.retries))


def retry_delay(retries: int) -> int:
    """Seconds before the next attempt: 10, 20, 40, ... by default."""
    return settings.MEMORY_WEBHOOK_RETRY_SECONDS * 2**retries
