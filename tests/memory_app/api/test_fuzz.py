"""Property: no input to any tool yields a 500, and every error has the documented shape."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_app.api.catalog import ALL_TOOL_VIEWS

pytestmark = pytest.mark.django_db

DOCUMENTED = {200, 201, 202, 400, 403, 404, 409, 413, 422, 429}

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=60),
    st.sampled_from(
        [
            "conversation",
            "user",
            "system:payments",
            "workspace_runbooks",
            "a/b",
            "00000000-0000-0000-0000-000000000000",
            "0" * 64,
            "note",
            "tool_call",
        ]
    ),
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)


def bodies_for(view):
    known = list(view.input_model.model_fields)
    return st.dictionaries(st.sampled_from([*known, "extra"]), json_values, max_size=len(known) + 1)


def _assert_documented(response):
    assert response.status_code in DOCUMENTED, response.content
    if response.status_code >= 400:
        body = response.json()
        assert isinstance(body["error"], str) and isinstance(body["detail"], str)
        if body["error"] == "invalid_input" and "fields" in body:
            assert all(isinstance(m, list) for m in body["fields"].values())


FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.mark.parametrize("view", ALL_TOOL_VIEWS, ids=lambda view: view.name)
def test_structured_bodies_never_cause_a_server_error(tools, view):
    @FUZZ
    @given(body=bodies_for(view))
    def check(body):
        _assert_documented(tools(view.name, body))

    check()


@pytest.mark.parametrize("view", ALL_TOOL_VIEWS, ids=lambda view: view.name)
def test_arbitrary_bytes_never_cause_a_server_error(tools, view):
    @FUZZ
    @given(raw=st.binary(max_size=200) | json_values.map(json.dumps).map(str.encode))
    def check(raw):
        response = tools.client.post(
            f"/api/v1/tools/{view.name}", raw, content_type="application/json"
        )
        _assert_documented(response)

    check()


@FUZZ
@given(
    conversation=st.text(max_size=250),
    run=st.text(max_size=250),
)
def test_arbitrary_runtime_headers_never_cause_a_server_error(tools, conversation, run):
    headers = {"X-Memory-Conversation": conversation, "X-Memory-Run": run}
    try:
        response = tools("memory_list", {"store": "conversation"}, **headers)
    except UnicodeEncodeError:
        return  # not representable in an HTTP header at all
    _assert_documented(response)
