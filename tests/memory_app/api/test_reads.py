"""memory_read, memory_list, memory_history: shapes, pagination, versions."""

import pytest

from tests.memory_app.api.conftest import remember_body

pytestmark = pytest.mark.django_db


def test_read_by_store_and_path_returns_the_documented_fields(tools):
    tools.ok("memory_remember", remember_body(path="a/b"), status=201)
    body = tools.ok("memory_read", {"store": "conversation", "path": "a/b"})
    assert set(body) >= {
        "id",
        "store",
        "scope",
        "path",
        "title",
        "recall_hint",
        "content",
        "sha256",
        "version",
        "doc_type",
        "trust",
        "state",
        "always_inject",
        "tags",
        "entities",
        "importance",
        "hit_count",
        "expires_at",
        "created_at",
        "updated_at",
        "source_refs",
    }
    assert body["scope"] == "conversation"
    assert body["tags"] == ["ingress", "nginx"]


def test_read_an_older_version(tools):
    first = tools.ok("memory_remember", remember_body(path="v", content="one"), status=201)
    tools.ok("memory_remember", remember_body(path="v", content="two"))
    assert tools.ok("memory_read", {"id": first["id"], "version": 1})["content"] == "one"
    assert tools.ok("memory_read", {"id": first["id"]})["content"] == "two"
    missing = tools("memory_read", {"id": first["id"], "version": 9})
    assert missing.status_code == 404


def test_read_needs_an_id_or_store_and_path(tools):
    response = tools("memory_read", {"store": "conversation"})
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_input"


def test_list_pages_through_a_store_in_path_order(tools):
    for name in ["e", "a", "d", "b", "c"]:
        tools.ok("memory_remember", remember_body(path=f"p/{name}", content=f"note {name}"), 201)
    first = tools.ok("memory_list", {"store": "conversation", "limit": 2})
    assert [d["path"] for d in first["documents"]] == ["p/a", "p/b"]
    second = tools.ok(
        "memory_list", {"store": "conversation", "limit": 2, "cursor": first["next_cursor"]}
    )
    assert [d["path"] for d in second["documents"]] == ["p/c", "p/d"]
    third = tools.ok(
        "memory_list", {"store": "conversation", "limit": 2, "cursor": second["next_cursor"]}
    )
    assert [d["path"] for d in third["documents"]] == ["p/e"]
    assert third["next_cursor"] is None


def test_list_filters_by_prefix(tools):
    tools.ok("memory_remember", remember_body(path="runbooks/x", content="alpha"), 201)
    tools.ok("memory_remember", remember_body(path="incidents/y", content="beta"), 201)
    listed = tools.ok("memory_list", {"store": "conversation", "prefix": "runbooks/"})
    assert [d["path"] for d in listed["documents"]] == ["runbooks/x"]


def test_list_leaves_out_what_has_expired_unless_inactive_ones_are_asked_for(tools):
    tools.ok("memory_remember", remember_body(path="keep", content="kept"), 201)
    tools.ok(
        "memory_remember",
        remember_body(path="gone", content="stale", expires_at="2020-01-01T00:00:00Z"),
        201,
    )
    listed = tools.ok("memory_list", {"store": "conversation"})
    assert [d["path"] for d in listed["documents"]] == ["keep"]
    everything = tools.ok("memory_list", {"store": "conversation", "include_inactive": True})
    assert [d["path"] for d in everything["documents"]] == ["gone", "keep"]


@pytest.mark.parametrize("cursor", ["%%%", "YQA"], ids=["not-base64", "holds-a-nul"])
def test_a_garbage_cursor_is_400(tools, runbooks, cursor):
    response = tools("memory_list", {"store": "workspace_runbooks", "cursor": cursor})
    assert (response.status_code, response.json()["error"]) == (400, "invalid_input")
    assert response.json()["fields"] == {"cursor": ["Invalid."]}


def test_list_is_bounded_in_queries(caller_for, owner, django_assert_max_num_queries):
    tools = caller_for(owner)  # a person: no per-run write cap
    for n in range(30):
        tools.ok("memory_remember", remember_body(path=f"n/{n:02}", content=f"note {n}"), 201)
    with django_assert_max_num_queries(10):
        listed = tools.ok("memory_list", {"store": "conversation", "limit": 30})
    assert len(listed["documents"]) == 30


def test_read_and_history_are_bounded_in_queries(tools, django_assert_max_num_queries):
    body = tools.ok("memory_remember", remember_body(path="h", content="v0"), status=201)
    for n in range(1, 20):
        tools.ok("memory_remember", remember_body(path="h", content=f"v{n}"))
    with django_assert_max_num_queries(10):
        tools.ok("memory_read", {"id": body["id"]})
    with django_assert_max_num_queries(10):
        versions = tools.ok("memory_history", {"id": body["id"], "limit": 50})["versions"]
    assert [v["version"] for v in versions] == list(range(20, 0, -1))
    assert all(v["parent_sha256"] == versions[i + 1]["sha256"] for i, v in enumerate(versions[:-1]))
