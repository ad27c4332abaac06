"""The ASGI application: one trip to a worker thread per request, and
database connections that outlive the request."""

import asyncio
import subprocess
import sys
import threading

import httpx
import pytest
from asgiref import sync
from django.core.signals import request_started
from django.db import connection
from django.db.backends.signals import connection_created

from config.asgi import django_application
from memory_app.api.stream import MAX_STREAM_SECONDS
from memory_app.services.principals import api_key_issue
from tests.aio import run
from tests.factories import UserFactory


def _scope(path: str, *headers: tuple[bytes, bytes]) -> dict:
    """The scope of a GET of `path`, as the server would pass it."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"localhost"), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


async def _get(path: str) -> int:
    """One GET through the ASGI application, as the server would make it."""
    messages = [{"type": "http.request", "body": b"", "more_body": False}]
    answered = asyncio.Event()
    status: list[int] = []

    async def receive():
        if messages:
            return messages.pop()
        await answered.wait()
        return {"type": "http.disconnect"}

    async def send(message):
        if message["type"] == "http.response.start":
            status.append(message["status"])
        elif not message.get("more_body"):
            answered.set()

    await django_application(_scope(path), receive, send)
    return status[0]


@pytest.mark.django_db(transaction=True)
def test_a_request_never_goes_back_to_the_event_loop_halfway(monkeypatch):
    """Middleware, URL resolution and view run in one call to the request's
    thread; Django's own handler came back to the loop between them."""
    returns_to_loop = []
    enter = sync.AsyncToSync.__call__

    def counted(self, *args, **kwargs):
        returns_to_loop.append(threading.get_ident())
        return enter(self, *args, **kwargs)

    monkeypatch.setattr(sync.AsyncToSync, "__call__", counted)
    assert run(_get("/healthz")) == 200
    assert returns_to_loop == []


@pytest.mark.django_db(transaction=True)
def test_a_request_crosses_to_its_thread_once(monkeypatch):
    """Start signal, middleware, view and end signal in one call; Django's
    handler made three."""
    crossings = []
    cross = sync.SyncToAsync.__call__

    def counted(self, *args, **kwargs):
        crossings.append(self.func)
        return cross(self, *args, **kwargs)

    monkeypatch.setattr(sync.SyncToAsync, "__call__", counted)
    assert run(_get("/healthz")) == 200
    assert len(crossings) == 1


@pytest.mark.django_db(transaction=True)
def test_requests_one_after_another_run_in_the_same_thread():
    """Django's handler starts and joins a thread for each request; here a
    finished request's thread serves the next one."""
    threads: list[int] = []

    def started(**kwargs):
        threads.append(threading.get_ident())

    request_started.connect(started)
    try:
        for _ in range(3):
            assert run(_get("/healthz")) == 200
    finally:
        request_started.disconnect(started)
    assert len(threads) == 3
    assert len(set(threads)) == 1
    assert threads[0] != threading.get_ident()


def test_requests_reuse_the_database_sessions_of_earlier_ones(asgi_server, transactional_db):
    """Under ASGI each request runs in a context of its own, where Django's
    persistent connections are never found again: without the pool every
    request started a new PostgreSQL session."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
        existing = {pid for (pid,) in cursor.fetchall()}
    sessions: list[int] = []

    def opened(sender, connection, **kwargs):
        sessions.append(connection.connection.info.backend_pid)

    connection_created.connect(opened)
    try:
        with httpx.Client(base_url=asgi_server.url) as client:
            for _ in range(6):
                assert client.get("/healthz").status_code == 200
    finally:
        connection_created.disconnect(opened)
    assert len(sessions) == 6
    # At most one new session, if no idle one was there for the first request.
    assert len(set(sessions) - existing) <= 1


@pytest.mark.django_db(transaction=True)
def test_an_event_stream_stops_when_its_client_disconnects():
    """The stream waits minutes for events; a client that has gone must not
    keep it open. Disconnecting after the first frame ends the call."""
    key = api_key_issue(user=UserFactory(username="watcher")).raw
    first_frame = asyncio.Event()
    frames: list[bytes] = []
    status: list[int] = []

    async def receive():
        if not frames and not status:
            return {"type": "http.request", "body": b"", "more_body": False}
        await first_frame.wait()
        return {"type": "http.disconnect"}

    async def send(message):
        if message["type"] == "http.response.start":
            status.append(message["status"])
        elif message.get("body"):
            frames.append(message["body"])
            first_frame.set()

    scope = _scope(
        "/api/v1/events/stream",
        (b"authorization", f"Token {key}".encode()),
        (b"accept", b"text/event-stream"),
    )

    async def call() -> float:
        started = asyncio.get_running_loop().time()
        await asyncio.wait_for(django_application(scope, receive, send), MAX_STREAM_SECONDS / 10)
        return asyncio.get_running_loop().time() - started

    assert run(call()) < 5
    assert status == [200]
    assert frames[0].startswith(b"retry:")


def test_the_server_has_the_scanner_and_the_model_ready_before_its_first_call():
    """Compiling the scanner's native patterns takes about a second and
    loading the embedding model half of one; a server process does both as
    it starts, not in its first write or search."""
    probe = (
        "import config.asgi\n"
        "from memory_app.embeddings import get_backend\n"
        "from memory_app.safety import injection, secrets\n"
        "print(all(n._compiled is not None for n in (secrets.NATIVE, injection.NATIVE))"
        " and get_backend.cache_info().currsize == 1)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "True"
