import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from memory_app.services.principals import api_key_issue, system_grant_set
from memory_app.services.stores import store_workspace_ensure
from tests.factories import UserFactory


@dataclass
class ToolCaller:
    """Calls /api/v1/tools/<name> as one principal with runtime headers."""

    client: APIClient
    headers: dict = field(default_factory=dict)

    def __call__(self, tool: str, body=None, **headers):
        merged = {**self.headers, **headers}
        extra = {f"HTTP_{name.upper().replace('-', '_')}": value for name, value in merged.items()}
        return self.client.post(f"/api/v1/tools/{tool}", body or {}, format="json", **extra)

    def ok(self, tool: str, body=None, status: int | None = 200, **headers) -> dict:
        """The JSON of a call answering `status` (None: any 2xx)."""
        response = self(tool, body, **headers)
        if status is None:
            assert 200 <= response.status_code < 300, response.content
        else:
            assert response.status_code == status, response.content
        return response.json()

    def with_headers(self, **headers) -> "ToolCaller":
        return ToolCaller(self.client, {**self.headers, **headers})


def race(count: int, work: Callable[[int], object]) -> list:
    """Run `work(n)` for each n below `count` on threads released at once,
    each with its own database connection; the results in order of n. For
    tests marked `django_db(transaction=True)`: the threads see only what
    is committed."""
    barrier = threading.Barrier(count)
    results: list = [None] * count

    def run(n: int) -> None:
        try:
            barrier.wait(timeout=60)
            results[n] = work(n)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.fixture
def caller_for():
    def make(user, conversation: str | None = "own", run: str | None = "run-1") -> ToolCaller:
        """`conversation="own"` names a conversation of this user's own."""
        if conversation == "own":
            conversation = f"conv-{user.get_username()}"
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {api_key_issue(user=user).raw}")
        headers = {}
        if conversation:
            headers["X-Memory-Conversation"] = conversation
        if run:
            headers["X-Memory-Run"] = run
        return ToolCaller(client, headers)

    return make


@pytest.fixture
def agent(db):
    return UserFactory(username="agent", service_account=True)


@pytest.fixture
def tools(caller_for, agent) -> ToolCaller:
    return caller_for(agent)


@pytest.fixture
def payments(db):
    """A system: team 'payments-readers' reads it, 'payments-owners' manages it."""
    system_grant_set(system_slug="payments", team="payments-readers", level="read")
    system_grant_set(system_slug="payments", team="payments-owners", level="manage")
    return "system:payments"


@pytest.fixture
def runbooks(db):
    """The seeded workspace_runbooks store, where reviewed runbooks live."""
    return store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")


def remember_body(**overrides) -> dict:
    body = {
        "store": "conversation",
        "title": "Nginx crash loop after config reload",
        "content": "The ingress pods crash-loop after a config reload; rolling back the "
        "configmap fixed it in incident INC-4411.",
        "recall_hint": "When nginx ingress pods restart repeatedly after a deploy.",
        "doc_type": "incident",
        "tags": ["nginx", "ingress"],
        "entities": {"service": "ingress-nginx", "environment": "prod"},
    }
    body.update(overrides)
    return body


def prepared_statement(queries: CaptureQueriesContext, prefix: str) -> str | None:
    """The text of the one prepared statement named `prefix…` that the
    captured call ran, or None when it ran none."""
    names = [
        match.group(1)
        for q in queries.captured_queries
        if (match := re.match(rf"EXECUTE ({prefix}\w+)\(", q["sql"]))
    ]
    assert len(names) <= 1, names
    if not names:
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE name = %s", names)
        (statement,) = cursor.fetchone()
    return statement
