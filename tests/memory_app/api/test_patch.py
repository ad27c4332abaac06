"""memory_patch: optimistic concurrency, edits, and racing writers."""

import threading

import pytest
from django.db import connections

from memory_app.models import MemoryDocument, MemoryVersion
from tests.factories import UserFactory
from tests.memory_app.api.conftest import remember_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def note(tools):
    return tools.ok("memory_remember", remember_body(path="notes/deploy"), status=201)


def test_it_replaces_content_when_the_sha_matches(tools, note):
    body = tools.ok(
        "memory_patch",
        {"id": note["id"], "expected_sha256": note["sha256"], "content": "Rewritten."},
    )
    assert body["outcome"] == "updated" and body["version"] == 2
    assert body["sha256"] != note["sha256"]
    history = tools.ok("memory_history", {"id": note["id"]})["versions"]
    assert [v["change"] for v in history] == ["patch", "create"]
    assert history[0]["parent_sha256"] == note["sha256"]


def test_edits_apply_in_order(tools, note):
    body = tools.ok(
        "memory_patch",
        {
            "store": "conversation",
            "path": "notes/deploy",
            "expected_sha256": note["sha256"],
            "edits": [
                {"old": "rolling back the configmap", "new": "reverting the configmap"},
                {"old": "INC-4411", "new": "INC-4412"},
            ],
        },
    )
    content = tools.ok("memory_read", {"id": body["id"]})["content"]
    assert "reverting the configmap fixed it in incident INC-4412." in content


@pytest.mark.parametrize("old", ["not in the text", "in"])
def test_an_edit_that_does_not_match_exactly_once_is_400(tools, note, old):
    response = tools(
        "memory_patch",
        {"id": note["id"], "expected_sha256": note["sha256"], "edits": [{"old": old, "new": "x"}]},
    )
    assert response.status_code == 400
    assert "edits" in response.json()["fields"]
    assert MemoryVersion.objects.filter(document_id=note["id"]).count() == 1


def test_a_stale_sha_is_409_with_the_current_one(tools, note):
    tools.ok("memory_patch", {"id": note["id"], "expected_sha256": note["sha256"], "content": "v2"})
    response = tools(
        "memory_patch", {"id": note["id"], "expected_sha256": note["sha256"], "content": "v3"}
    )
    assert response.status_code == 409
    body = response.json()
    assert body["error"] == "conflict"
    assert body["current_version"] == 2
    assert body["current_sha256"] == tools.ok("memory_read", {"id": note["id"]})["sha256"]


def test_content_and_edits_together_are_400(tools, note):
    response = tools(
        "memory_patch",
        {
            "id": note["id"],
            "expected_sha256": note["sha256"],
            "content": "a",
            "edits": [{"old": "INC", "new": "X"}],
        },
    )
    assert response.status_code == 400


def test_a_patch_that_adds_a_secret_is_refused(tools, note):
    response = tools(
        "memory_patch",
        {
            "id": note["id"],
            "expected_sha256": note["sha256"],
            "content": "aws key AKIAZ7Q3MNB4XK2PLW9T",
        },
    )
    assert response.status_code == 422
    assert tools.ok("memory_read", {"id": note["id"]})["version"] == 1


def test_nobody_else_can_patch_my_conversation_memory(tools, note, caller_for):
    other = caller_for(UserFactory(username="other-agent"))
    response = other(
        "memory_patch", {"id": note["id"], "expected_sha256": note["sha256"], "content": "mine"}
    )
    assert response.status_code == 404


@pytest.mark.django_db(transaction=True)
def test_of_eight_racing_patches_with_one_sha_exactly_one_wins(caller_for):
    agent = UserFactory(username="racer")
    note = caller_for(agent).ok("memory_remember", remember_body(path="race"), status=201)
    barrier = threading.Barrier(8)
    statuses: list[int] = []

    def patch(n: int) -> None:
        try:
            caller = caller_for(agent)
            barrier.wait(timeout=60)
            response = caller(
                "memory_patch",
                {"id": note["id"], "expected_sha256": note["sha256"], "content": f"writer {n}"},
            )
            statuses.append(response.status_code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=patch, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [200] + [409] * 7
    assert MemoryVersion.objects.filter(document_id=note["id"]).count() == 2


@pytest.mark.django_db(transaction=True)
def test_racing_creates_of_one_path_make_one_document_and_lose_nothing(caller_for):
    writer = UserFactory(username="writer")
    barrier = threading.Barrier(6)
    outcomes: list[str] = []

    def remember(n: int) -> None:
        try:
            caller = caller_for(writer)
            barrier.wait(timeout=60)
            body = caller.ok(
                "memory_remember",
                remember_body(path="same/path", content=f"distinct value number {n} " * 3),
                status=None,
            )
            outcomes.append(body["outcome"])
        finally:
            connections.close_all()

    threads = [threading.Thread(target=remember, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count("created") == 1
    assert len(outcomes) == 6
    document = MemoryDocument.objects.get(path="same/path")
    assert MemoryVersion.objects.filter(document=document).count() == 1 + outcomes.count("updated")


def test_a_patch_costs_a_fixed_number_of_statements(tools, note, django_assert_num_queries):
    # Authentication with the conversation and its store (1), the document
    # with its store (1), the transaction (2), quota lock and counts (2), the
    # head locked with its version's refs and hashes (1), the head (1), the
    # new version (1) and the event (1).
    with django_assert_num_queries(10):
        body = tools.ok(
            "memory_patch",
            {"id": note["id"], "expected_sha256": note["sha256"], "content": "Rewritten."},
        )
    assert body["version"] == 2
