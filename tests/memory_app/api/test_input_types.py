"""A tool's input is read by JSON's own types, and a moment must be one
Python can read back: what cannot be stored as sent is a 400 naming the
field, and nothing is written."""

import pytest

from memory_app.models import MemoryDocument, MemoryStore
from tests.memory_app.api.conftest import remember_body

pytestmark = pytest.mark.django_db


def _refused(response, field: str) -> list[str]:
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error"] == "invalid_input"
    assert list(body["fields"]) == [field], body
    return body["fields"][field]


@pytest.mark.parametrize(
    "moment",
    [
        "9999-12-31T23:59:59-14:00",  # the year 10000 in UTC
        "0001-01-01T00:00:00+14:00",  # the year 0 in UTC
    ],
)
def test_an_expiry_beyond_the_years_utc_can_hold_is_refused(tools, moment):
    response = tools("memory_remember", remember_body(path="exp/far", expires_at=moment))
    assert _refused(response, "expires_at") == [
        "Value error, Must fall between the years 1 and 9999 in UTC."
    ]
    assert not MemoryDocument.objects.filter(path="exp/far").exists()


def test_a_patch_may_not_set_such_an_expiry_either(tools):
    written = tools.ok("memory_remember", remember_body(path="exp/patched"), status=201)
    response = tools(
        "memory_patch",
        {
            "id": written["id"],
            "expected_sha256": written["sha256"],
            "expires_at": "9999-12-31T23:59:59-14:00",
        },
    )
    _refused(response, "expires_at")
    read = tools.ok("memory_read", {"id": written["id"]})
    assert (read["version"], read["expires_at"]) == (1, None)


@pytest.mark.parametrize(
    ("sent", "read"),
    [
        ("9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z"),  # the last moment UTC holds
        ("2031-06-01T12:00:00", "2031-06-01T12:00:00Z"),  # no offset: UTC
    ],
)
def test_a_moment_utc_can_hold_is_kept_and_read_back(tools, sent, read):
    written = tools.ok("memory_remember", remember_body(expires_at=sent), status=201)
    assert tools.ok("memory_read", {"id": written["id"]})["expires_at"] == read


@pytest.mark.parametrize(
    ("tool", "body", "field"),
    [
        ("memory_remember", remember_body(importance=True), "importance"),
        ("memory_remember", remember_body(importance="5"), "importance"),
        ("memory_remember", remember_body(importance=5.5), "importance"),
        ("memory_remember", remember_body(always_inject="yes"), "always_inject"),
        ("memory_remember", remember_body(always_inject=1), "always_inject"),
        ("memory_remember", remember_body(expires_at=1700000000), "expires_at"),
        ("memory_search", {"query": "nginx", "limit": "5"}, "limit"),
        ("memory_search", {"query": "nginx", "include_drafts": "false"}, "include_drafts"),
        ("memory_context", {"message": "nginx", "max_docs": True}, "max_docs"),
        ("memory_list", {"store": "conversation", "limit": 10.5}, "limit"),
    ],
)
def test_a_value_of_another_json_type_is_refused_not_converted(tools, tool, body, field):
    before = MemoryDocument.objects.count()
    _refused(tools(tool, body), field)
    assert MemoryDocument.objects.count() == before


def test_a_whole_number_written_with_a_fraction_is_an_integer(tools):
    # JSON has one number type; its Schema counts 8.0 as an integer.
    written = tools.ok("memory_remember", remember_body(importance=8.0), status=201)
    assert tools.ok("memory_read", {"id": written["id"]})["importance"] == 8


def test_ids_moments_and_choices_are_still_strings(tools):
    written = tools.ok(
        "memory_remember",
        remember_body(path="ok/typed", doc_type="runbook", expires_at="2031-01-01T00:00:00+02:00"),
        status=201,
    )
    read = tools.ok("memory_read", {"id": written["id"]})
    assert (read["doc_type"], read["expires_at"]) == ("runbook", "2030-12-31T22:00:00Z")


def test_a_refused_patch_field_is_named_alone(tools):
    written = tools.ok("memory_remember", remember_body(path="ok/named"), status=201)
    response = tools(
        "memory_patch", {"id": written["id"], "expected_sha256": written["sha256"], "title": ""}
    )
    assert _refused(response, "title") == ["String should have at least 1 character"]


def test_a_conversation_id_of_the_longest_allowed_length_is_written(caller_for, agent):
    external_id = "c" * 200
    caller = caller_for(agent, conversation=external_id)
    written = caller.ok("memory_remember", remember_body(path="long/conv"), status=201)
    assert caller.ok("memory_read", {"id": written["id"]})["store"] == "conversation"
    store = MemoryStore.objects.get(conversation__external_id=external_id)
    assert len(store.name) == 200
    assert store.name.startswith("conversation ccc") and store.name.endswith("…")


ISO_8601 = ["An ISO 8601 date and time, such as 2026-01-31T12:00:00Z."]


@pytest.mark.parametrize("sent", ["0", "-1", "1893456000", "20260101", "1.5", "2026-01"])
def test_an_expiry_that_is_not_an_iso_8601_moment_is_refused(tools, sent):
    response = tools("memory_remember", remember_body(path="exp/epoch", expires_at=sent))
    assert _refused(response, "expires_at") == ISO_8601
    assert not MemoryDocument.objects.filter(path="exp/epoch").exists()


def test_an_expiry_of_a_date_alone_is_its_midnight_in_utc(tools):
    written = tools.ok(
        "memory_remember", remember_body(path="exp/date", expires_at="2031-01-31"), status=201
    )
    assert tools.ok("memory_read", {"id": written["id"]})["expires_at"] == "2031-01-31T00:00:00Z"


def test_a_patch_may_not_set_an_expiry_in_unix_seconds(tools):
    written = tools.ok("memory_remember", remember_body(path="exp/epoch-patch"), status=201)
    response = tools(
        "memory_patch",
        {"id": written["id"], "expected_sha256": written["sha256"], "expires_at": "0"},
    )
    assert _refused(response, "expires_at") == ISO_8601
    read = tools.ok("memory_read", {"id": written["id"]})
    assert (read["version"], read["expires_at"]) == (1, None)


def test_an_iso_8601_moment_that_does_not_exist_is_refused_saying_why(tools):
    response = tools("memory_remember", remember_body(expires_at="2031-13-01T00:00:00Z"))
    assert _refused(response, "expires_at") == [
        "Input should be a valid datetime, month value is outside expected range of 1-12"
    ]


def test_an_iso_8601_moment_with_a_space_is_kept(tools):
    written = tools.ok("memory_remember", remember_body(expires_at="2031-06-01 12:00Z"), status=201)
    read = tools.ok("memory_read", {"id": written["id"]})
    assert read["expires_at"] == "2031-06-01T12:00:00Z"
