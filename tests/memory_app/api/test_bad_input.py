"""Input the service cannot store is a 400 naming the field, never a 500."""

import base64

import pytest
from rest_framework.test import APIClient

from memory_app.api import schemas
from memory_app.api.tools import TOOL_VIEWS
from memory_app.api.validation import MAX_DEPTH
from memory_app.services.principals import api_key_issue

pytestmark = pytest.mark.django_db

NUL = "fact\x00more"
ITEM = "00000000-0000-0000-0000-000000000000"
REVIEW_INPUTS = {
    f"/api/v1/promotions/{ITEM}/approve": schemas.ApproveIn,
    f"/api/v1/promotions/{ITEM}/reject": schemas.RejectIn,
    f"/api/v1/documents/{ITEM}/rollback": schemas.RollbackIn,
}


def _text_fields(schema: dict, defs: dict, prefix: str = "") -> list[str]:
    """Every string-valued field of a JSON Schema, as the API names it (`a.0.b`)."""
    if "$ref" in schema:
        return _text_fields(defs[schema["$ref"].rsplit("/", 1)[-1]], defs, prefix)
    found = []
    options = schema["anyOf"] if "anyOf" in schema and "properties" not in schema else [schema]
    for option in options:
        if option.get("type") == "string" and option.get("format") not in ("uuid", "date-time"):
            found.append(prefix)
        elif option.get("type") == "array":
            found += _text_fields(option["items"], defs, f"{prefix}.0")
        elif "$ref" in option or option.get("type") == "object":
            target = defs[option["$ref"].rsplit("/", 1)[-1]] if "$ref" in option else option
            for name, child in target.get("properties", {}).items():
                found += _text_fields(child, defs, f"{prefix}.{name}" if prefix else name)
    return sorted(set(found))


def _cases():
    inputs = {f"/api/v1/tools/{view.name}": view.input_model for view in TOOL_VIEWS}
    for path, model in {**inputs, **REVIEW_INPUTS}.items():
        schema = model.model_json_schema()
        for field in _text_fields(schema, schema.get("$defs", {})):
            yield pytest.param(path, field, id=f"{path.rsplit('/', 1)[-1]}:{field}")


def _nest(field: str, value) -> dict:
    """`{"a": [{"b": value}]}` for `a.0.b`."""
    for part in reversed(field.split(".")):
        value = [value] if part == "0" else {part: value}
    return value


@pytest.fixture
def client(reviewer):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key_issue(user=reviewer).raw}")
    return client


def _refused(response, field: str) -> None:
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error"] == "invalid_input"
    assert field in body["fields"], body


def test_every_text_field_is_covered():
    fields = {case.values[1] for case in _cases()}
    assert {"content", "title", "recall_hint", "tags.0", "entities.service"} <= fields
    assert {"source_refs.0.ref", "edits.0.old", "rationale", "reason", "note", "query"} <= fields


@pytest.mark.parametrize(("path", "field"), list(_cases()))
def test_a_nul_byte_in_any_text_field_is_400_naming_it(client, path, field):
    response = client.post(path, _nest(field, NUL), format="json")
    _refused(response, field)


@pytest.mark.parametrize("escape", ["\\u0001", "\\u001b", "\\u007f", "\\u0085", "\\ud800"])
def test_other_control_characters_and_lone_surrogates_are_400(client, escape):
    response = client.post(
        "/api/v1/tools/memory_remember",
        f'{{"store": "user", "content": "a{escape}b"}}',
        content_type="application/json",
    )
    _refused(response, "content")


@pytest.mark.parametrize("escape", ["\\u202a", "\\u202e", "\\u2066", "\\u2069"])
def test_bidirectional_overrides_and_isolates_are_400(client, escape):
    # A title stored as "RTL \u202e evil" reads "RTL live" on every page.
    response = client.post(
        "/api/v1/tools/memory_remember",
        f'{{"store": "user", "content": "fine", "title": "RTL {escape} evil"}}',
        content_type="application/json",
    )
    _refused(response, "title")
    assert f"U+{escape[2:].upper()} at position 4" in response.json()["fields"]["title"][0]


def test_right_to_left_writing_and_its_marks_are_text(caller_for, owner):
    # Hebrew and Arabic words with the right-to-left mark, the Arabic letter
    # mark and the left-to-right mark between them.
    hebrew, arabic = "\u05e9\u05dc\u05d5\u05dd", "\u0645\u0631\u062d\u0628\u0627"
    body = {"store": "conversation", "content": f"{hebrew} \u200f{arabic} \u061c ok \u200e"}
    response = caller_for(owner)("memory_remember", body)
    assert response.status_code == 201, response.content


def test_a_lone_surrogate_is_named_as_one(client):
    response = client.post(
        "/api/v1/tools/memory_remember",
        '{"store": "user", "content": "ab\\ud800"}',
        content_type="application/json",
    )
    _refused(response, "content")
    assert response.json()["fields"]["content"] == ["Lone surrogate U+D800 at position 2."]


def test_tabs_and_newlines_are_text(caller_for, owner):
    body = {"store": "conversation", "content": "line one\n\tline two\r\n"}
    assert caller_for(owner)("memory_remember", body).status_code == 201


def test_a_control_character_in_a_key_is_400(client):
    response = client.post("/api/v1/tools/memory_search", {"query": "x", "a\x00": 1}, format="json")
    _refused(response, "body")


def test_nesting_past_the_limit_is_400(client):
    response = client.post(
        "/api/v1/tools/memory_search", {"query": "x", "tags": _deep(MAX_DEPTH)}, format="json"
    )
    assert response.status_code == 400
    [(field, messages)] = response.json()["fields"].items()
    assert field.startswith("tags.0.0")
    assert messages == [f"Nested deeper than {MAX_DEPTH} levels."]


def test_nesting_deep_enough_to_exhaust_the_parser_is_400(client):
    raw = "[" * 100_000 + "]" * 100_000
    response = client.post("/api/v1/tools/memory_search", raw, content_type="application/json")
    _refused(response, "body")


def _deep(levels: int):
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


def test_invalid_utf8_is_400(client):
    response = client.post(
        "/api/v1/tools/memory_search", b'{"query": "caf\xe9"}', content_type="application/json"
    )
    _refused(response, "body")


def test_non_finite_numbers_are_400(client):
    response = client.post(
        "/api/v1/tools/memory_search",
        '{"query": "x", "limit": NaN}',
        content_type="application/json",
    )
    _refused(response, "body")


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("X-Memory-Run", "r" * 201),
        ("X-Memory-Conversation", "c" * 5000),
        ("X-Memory-On-Behalf-Of", "u" * 201),
        ("Authorization", "Token " + "k" * 600),
    ],
)
def test_overlong_headers_are_400_naming_the_header(header, value):
    meta = "HTTP_" + header.upper().replace("-", "_")
    response = APIClient().post(
        "/api/v1/tools/memory_search", {"query": "x"}, format="json", **{meta: value}
    )
    _refused(response, header)


def test_a_nul_in_a_query_parameter_is_400(client):
    _refused(client.get("/api/v1/events", {"conversation": "a\x00b"}), "conversation")
    _refused(client.get("/api/v1/promotions", {"cursor": "\x00"}), "cursor")


def test_invalid_utf8_in_a_query_parameter_is_400(client):
    _refused(client.get("/api/v1/events?conversation=%C3%28"), "conversation")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/v1/nope"),
        ("post", "/api/v1/tools/nope"),
        ("post", "/api/v1/promotions/not-a-uuid/reject"),
        ("get", "/api/v1/tools/memory_search/extra"),
        ("post", "/api/v1"),
        ("post", "/api"),
        ("get", "/api/v2/tools"),
    ],
)
def test_an_unknown_api_path_is_a_404_in_the_error_shape_even_in_debug(
    client, settings, method, path
):
    settings.DEBUG = True
    response = getattr(client, method)(path, {}, format="json")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"error": "not_found", "detail": "Not found."}


def _cursor(raw: str) -> str:
    return base64.urlsafe_b64encode(raw.encode()).decode()


@pytest.mark.parametrize(
    "raw",
    [
        "2026-01-01T00:00:00+00:00|notauuid",
        "2026-01-01|",
        f"2026-01-01T00:00:00|{ITEM}",  # a moment without an offset
        f"not a moment|{ITEM}",
        "no separator",
    ],
)
def test_a_crafted_promotions_cursor_is_400_naming_it(client, raw):
    _refused(client.get("/api/v1/promotions", {"cursor": _cursor(raw)}), "cursor")


def test_a_promotions_cursor_of_the_api_s_own_form_is_read(client):
    response = client.get(
        "/api/v1/promotions", {"cursor": _cursor(f"2026-01-01T00:00:00+00:00|{ITEM}")}
    )
    assert response.status_code == 200, response.content
    assert response.json() == {"items": [], "next_cursor": None}


def test_a_bad_query_parameter_name_is_blamed_on_the_query_string_not_an_argument(client):
    response = client.post("/api/v1/tools/memory_search?%01=1", {"query": "x"}, format="json")
    _refused(response, "query string")
    assert response.json()["fields"] == {
        "query string": [
            "A parameter name has a bad character: Control character U+0001 at position 0."
        ]
    }
