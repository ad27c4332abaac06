"""Kombu's filesystem transport: the zero-setup broker (docs/decisions.md).

Messages are files in the data folder, so a real worker and beat run with
no server beyond the embedded database. Kept free of Django imports:
settings.py uses it.
"""

import contextlib
import os
import uuid
from pathlib import Path
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import TRANSPORT_ALIASES, filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

TRANSPORT = f"{__name__}:WholeFileTransport"


class WholeFileChannel(filesystem.Channel):
    """A channel whose messages appear in the queue folder only when whole.

    Kombu's own channel creates a message's file under its final name and
    then writes it, so a worker polling the folder can take the file while
    it is still empty; the worker then stops on the JSON error for good.
    Here the message is written under a name no reader matches (readers
    take `<queue>.msg` files only) and renamed into place, which is atomic
    within one folder.
    """

    def _put(self, queue, payload, **kwargs):
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = f"{final}.part"
        try:
            with open(partial, "wb") as file:
                file.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.remove(partial)
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class WholeFileTransport(filesystem.Transport):
    Channel = WholeFileChannel


# Settings import this module in every process, so `filesystem://` names
# the whole-file transport before any connection is made; a broker URL of
# another scheme is untouched.
TRANSPORT_ALIASES["filesystem"] = TRANSPORT


def filesystem_broker(data_dir: Path) -> dict:
    """Celery settings (lower-case names) for the filesystem transport under `data_dir`."""
    folders = {name: data_dir / "broker" / name for name in ("queue", "processed", "control")}
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    return {
        # A host named, or kombu warns that it supplies one on every message sent.
        "broker_url": "filesystem://localhost/",
        "broker_transport_options": {
            "data_folder_in": str(folders["queue"]),
            "data_folder_out": str(folders["queue"]),
            "processed_folder": str(folders["processed"]),
            "control_folder": str(folders["control"]),
            "store_processed": False,
        },
    }
