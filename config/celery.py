"""The Celery app, configured from Django's settings (CELERY_* names).

The broker is CELERY_BROKER_URL (Redis or RabbitMQ) when set; otherwise the
settings choose kombu's filesystem transport in the data folder
(config/brokers.py), so the zero-setup install still runs a real worker.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("agent_memory")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
