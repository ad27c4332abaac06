"""Webhooks: events from the outbox, signed and sent by the Celery worker.

Writes never wait for a webhook: a periodic task reads the outbox after each
endpoint's cursor and queues deliveries, so a slow or failing endpoint only
delays its own deliveries.
"""
