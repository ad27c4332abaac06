"""The project's ASGI application served by uvicorn in a thread, for tests that
need a real HTTP connection (MCP, Server-Sent Events) against the test database."""

import socket
import threading
import time

import uvicorn
from django.db import connection


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LiveAsgiServer:
    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        from config.asgi import django_application
        from memory_app.mcp.asgi import with_mcp

        # A new application each start, as a restarted process would have
        # (the MCP session manager runs once per instance).
        config = uvicorn.Config(
            with_mcp(django_application),
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        """Stop like a restart does: open streams are cut after a short grace."""
        assert self._server is not None and self._thread is not None
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._server = None


def server_connections_close() -> None:
    """End the connections the server's worker threads kept open, so the test
    database can be dropped (those threads are gone; only the server knows them).

    The connection that ends them is handed back too: one still checked out
    of the pool outlives the pool's closing and kept the database from
    being dropped at the end of the run."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    connection.close()
