"""The Celery app.

With CELERY_BROKER_URL set (Redis or RabbitMQ) that broker is used. Without
one, messages travel through kombu's filesystem transport in the data folder,
so the zero-setup install still runs a real worker and beat with no server
beyond the embedded database (docs/decisions.md explains the choice).
"""

import os
from pathlib import Path

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("agent_memory")
app.config_from_object("django.conf:settings", namespace="CELERY")


def filesystem_broker(data_dir: Path) -> dict:
    """Celery settings for kombu's filesystem transport under `data_dir`/broker."""
    queue_dir = data_dir / "broker" / "queue"
    processed_dir = data_dir / "broker" / "processed"
    queue_dir.mkdir(parents=True, exist_ok=True)
    processed_dir.mkdir(parents=True, exist_ok=True)
    return {
        "broker_url": "filesystem://",
        "broker_transport_options": {
            "data_folder_in": str(queue_dir),
            "data_folder_out": str(queue_dir),
            "processed_folder": str(processed_dir),
            "store_processed": False,
        },
    }


def _zero_setup_broker() -> None:
    from django.conf import settings

    if not settings.CELERY_BROKER_URL:
        app.conf.update(filesystem_broker(settings.MEMORY_DATA_DIR))


app.on_configure.connect(lambda sender, **kwargs: _zero_setup_broker())
app.autodiscover_tasks()
