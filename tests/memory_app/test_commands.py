"""The operator commands: idempotent, non-interactive, keys that work."""

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from config.database.server import ensure_server, stop_server
from memory_app.models import MemoryStore, SystemGrant
from tests.factories import WorkspaceStoreFactory, make_document

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def run(*args) -> list[str]:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue().strip().splitlines()


def whoami(key: str) -> dict:
    response = APIClient().get("/api/v1/me", HTTP_AUTHORIZATION=f"Token {key}")
    assert response.status_code == 200, response.content
    return response.json()


def test_memory_user_prints_a_working_key_as_the_last_line():
    key = run("memory_user", "agent-1")[-1]
    assert whoami(key) == {
        "username": "agent-1",
        "service_account": False,
        "permissions": ["manage_memory", "read_memory"],
    }


def test_memory_user_flags_grant_what_they_say():
    key = run(
        "memory_user",
        "bot",
        "--reviewer",
        "--service-account",
        "--act-on-behalf",
        "--team",
        "sre",
        "--team",
        "payments-team",
    )[-1]
    me = whoami(key)
    assert me["service_account"] is True
    assert set(me["permissions"]) == {
        "read_memory",
        "manage_memory",
        "review_promotions",
        "act_on_behalf",
    }
    user = get_user_model().objects.get(username="bot")
    assert set(user.groups.values_list("name", flat=True)) == {"sre", "payments-team"}


def test_memory_user_is_idempotent_and_each_run_issues_a_new_working_key():
    first = run("memory_user", "carol", "--reviewer", "--team", "sre")[-1]
    second = run("memory_user", "carol", "--reviewer", "--team", "sre")[-1]
    assert first != second
    assert get_user_model().objects.filter(username="carol").count() == 1
    assert Group.objects.filter(name="sre").count() == 1
    assert whoami(first)["username"] == whoami(second)["username"] == "carol"


def test_memory_user_never_removes_rights_that_a_rerun_omits():
    run("memory_user", "dave", "--reviewer")
    key = run("memory_user", "dave")[-1]
    assert "review_promotions" in whoami(key)["permissions"]


def test_memory_user_sets_a_password_that_logs_in(client):
    run("memory_user", "erin", "--password", "s3cret-enough-pw")
    assert client.login(username="erin", password="s3cret-enough-pw")


def test_memory_user_without_a_key_issues_none_and_prints_nothing(client):
    assert run("memory_user", "gina", "--password", "s3cret-enough-pw", "--no-key") == []
    assert not get_user_model().objects.get(username="gina").api_keys.exists()
    assert client.login(username="gina", password="s3cret-enough-pw")


def test_memory_user_without_a_password_cannot_log_in(client):
    run("memory_user", "frank")
    assert not get_user_model().objects.get(username="frank").has_usable_password()


def test_memory_grant_creates_system_store_and_team_once():
    assert run("memory_grant", "payments", "sre", "read") == ["sre has read on payments"]
    assert run("memory_grant", "payments", "sre", "read") == ["sre has read on payments"]
    assert SystemGrant.objects.get().level == "read"
    assert MemoryStore.objects.filter(scope="system", system__slug="payments").count() == 1


def test_memory_grant_changes_the_level():
    run("memory_grant", "payments", "sre", "read")
    run("memory_grant", "payments", "sre", "manage")
    assert list(SystemGrant.objects.values_list("level", flat=True)) == ["manage"]


def test_memory_grant_refuses_an_unknown_level():
    with pytest.raises(CommandError):
        call_command("memory_grant", "payments", "sre", "admin", stderr=io.StringIO())
    assert not SystemGrant.objects.exists()


def test_memory_grant_refuses_a_malformed_system_slug():
    with pytest.raises(CommandError):
        call_command("memory_grant", "Pay Ments", "sre", "read")


@pytest.mark.parametrize(
    ("system", "group", "said"),
    [
        ("payments-api", "o\tps", "A team name is 1 to 150 printable characters."),
        ("payments-api", "o\nps", "A team name is 1 to 150 printable characters."),
        ("payments-api", "  ", "A team name is 1 to 150 printable characters."),
        ("payments-api", "\udcff", "Arguments must be UTF-8 text."),
        ("pay\udcffments", "ops", "Arguments must be UTF-8 text."),
    ],
)
def test_memory_grant_refuses_a_team_name_memory_user_refuses(system, group, said):
    groups = Group.objects.count()
    with pytest.raises(CommandError) as raised:
        call_command("memory_grant", system, group, "read", stdout=io.StringIO())
    assert str(raised.value) == said
    assert Group.objects.count() == groups and not SystemGrant.objects.exists()


def test_memory_embed_refuses_a_limit_below_one():
    with pytest.raises(CommandError, match="--limit must be at least 1"):
        call_command("memory_embed", "--limit", "-5", stdout=io.StringIO())


def test_memory_embed_counts_its_progress_to_the_limit():
    store = WorkspaceStoreFactory()
    for n in range(4):
        make_document(store, path=f"n{n}", content=f"Note {n} on disk usage", embedding=None)
    out = io.StringIO()
    call_command("memory_embed", "--limit", "2", "--batch-size", "1", stdout=out)
    lines = out.getvalue().splitlines()
    assert [line.split(" (")[0] for line in lines] == [
        "embedded 1 of 2",
        "embedded 2 of 2",
        "embedded 2 documents",
    ]
    assert lines[1].endswith(", 0 s left)")


def test_run_dreams_lists_the_kinds_it_accepts():
    with pytest.raises(CommandError) as raised:
        call_command("run_dreams", "--kind", "bogus")
    assert "(choose from 'canary', 'compact', 'consolidate'," in str(raised.value)
    assert "DreamKind" not in str(raised.value)


def test_a_command_stopped_by_sigterm_fails_and_releases_the_embedded_server(tmp_path):
    """An import reading stdin is stopped: its status says so (143, as for
    any process the signal ends), and it no longer counts among the users
    that keep the embedded server running."""
    data_dir = tmp_path / "postgres"
    ensure_server(data_dir, cleanup=None)  # started here: the child only attaches
    handles = data_dir / ".handle_pids.json"
    environment = {**os.environ, "MEMORY_DATA_DIR": str(tmp_path)}
    environment.pop("DATABASE_URL", None)
    child = subprocess.Popen(
        [sys.executable, "manage.py", "memory_import", "-"],
        cwd=ROOT,
        env=environment,
        stdin=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while child.pid not in _attached(handles):
            assert child.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=60) == 128 + signal.SIGTERM
        assert child.pid not in _attached(handles)
    finally:
        if child.poll() is None:
            child.kill()
        stop_server(data_dir)


def _attached(handles: Path) -> list[int]:
    """The pids the embedded server counts as its users."""
    try:
        return json.loads(handles.read_text())
    except ValueError:  # caught while it is rewritten
        return []
