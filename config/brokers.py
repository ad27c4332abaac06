"""Kombu's filesystem transport: the zero-setup broker (docs/decisions.md).

Messages are files in the data folder, so a real worker and beat run with
no server beyond the embedded database. Kept free of Django imports:
settings.py uses it.
"""

from pathlib import Path


def filesystem_broker(data_dir: Path) -> dict:
    """Celery settings (lower-case names) for the filesystem transport under `data_dir`."""
    folders = {name: data_dir / "broker" / name for name in ("queue", "processed", "control")}
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    return {
        "broker_url": "filesystem://",
        "broker_transport_options": {
            "data_folder_in": str(folders["queue"]),
            "data_folder_out": str(folders["queue"]),
            "processed_folder": str(folders["processed"]),
            "control_folder": str(folders["control"]),
            "store_processed": False,
        },
    }
