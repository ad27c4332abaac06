"""A user's private store comes into existence with the first write that
keeps something: reads and refused writes leave none behind."""

import pytest

from memory_app.models import MemoryStore, Scope

pytestmark = pytest.mark.django_db

PREFERENCE = {"store": "user", "doc_type": "user_preference", "content": "Prefers fish shell."}


def _user_stores(user) -> int:
    return MemoryStore.objects.filter(scope=Scope.USER, owner=user).count()


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        pytest.param({**PREFERENCE, "doc_type": "runbook"}, 403, "policy_denied", id="policy"),
        pytest.param(
            {**PREFERENCE, "content": "key AKIAIOSFODNN7EXAMPLQ"},
            422,
            "write_blocked",
            id="scanner",
        ),
        pytest.param({**PREFERENCE, "importance": 11}, 400, "invalid_input", id="bad-input"),
    ],
)
@pytest.mark.parametrize("conversation", [None, "own"], ids=["no-conversation", "conversation"])
def test_a_refused_first_write_leaves_no_store(
    caller_for, agent, body, status, error, conversation
):
    response = caller_for(agent, conversation=conversation)("memory_remember", body)
    assert (response.status_code, response.json()["error"]) == (status, error)
    assert _user_stores(agent) == 0


def test_reads_of_the_user_store_before_any_write_are_empty_and_create_nothing(caller_for, agent):
    tools = caller_for(agent, conversation=None)
    assert tools.ok("memory_list", {"store": "user"})["documents"] == []
    assert tools.ok("memory_search", {"query": "fish shell", "stores": ["user"]})["results"] == []
    assert _user_stores(agent) == 0


def test_the_first_kept_write_creates_the_store_and_lists_in_it(tools, agent):
    written = tools.ok("memory_remember", PREFERENCE, status=201)
    assert _user_stores(agent) == 1
    listed = tools.ok("memory_list", {"store": "user"})["documents"]
    assert [d["id"] for d in listed] == [written["id"]]
    tools.ok(
        "memory_remember", {**PREFERENCE, "path": "editor", "content": "Uses helix."}, status=201
    )
    assert _user_stores(agent) == 1
