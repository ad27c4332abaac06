"""Over MCP a tool call meets the limits of REST: input checks, throttles,
on-behalf-of rules, run caps, and the same error codes (the body limit:
test_mcp_body_limit.py)."""

import json

import httpx
import pytest

from memory_app.api.validation import MAX_DEPTH
from memory_app.models import MemoryDocument
from memory_app.services.principals import api_key_issue, principal_upsert
from tests.aio import run
from tests.factories import UserFactory
from tests.memory_app.api.capture_transcripts import INCIDENT_WITH_LEARNINGS, SECRET_LEAK, TOKEN
from tests.memory_app.api.conftest import remember_body
from tests.memory_app.mcp.conftest import connected, conversation_headers

pytestmark = pytest.mark.django_db(transaction=True)

BEHALF = "X-Memory-On-Behalf-Of"


def over_mcp(url: str, key: str, calls: list[tuple[str, dict]], **headers) -> list:
    """The results of `calls`, made in order in one MCP session."""

    async def scenario():
        async with connected(url, key, **headers) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    return run(scenario())


def over_rest(url: str, key: str, name: str, arguments: dict, **headers) -> httpx.Response:
    return httpx.post(
        f"{url}/api/v1/tools/{name}",
        content=json.dumps(arguments),
        headers={"Authorization": f"Token {key}", "Content-Type": "application/json", **headers},
    )


def refusal(result) -> dict:
    """The error answer of an MCP tool result, which must be one."""
    assert result.is_error, result
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


def written():
    """Documents agents wrote (the seeded workspace policies aside)."""
    return MemoryDocument.objects.exclude(store__scope="workspace")


def _deep(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("name", "arguments", "headers"),
    [
        ("memory_remember", remember_body(content="fact\x00more"), {}),
        ("memory_remember", remember_body(title="a\x1bb"), {}),
        ("memory_remember", remember_body(tags=["ok", "\x7f"]), {}),
        ("memory_search", {"query": "x", "a\x00": 1}, {}),
        ("memory_search", {"query": "x", "tags": _deep(MAX_DEPTH)}, {}),
        ("memory_search", {"query": "x", "tags": _deep(150)}, {}),
        ("memory_search", {"query": "x"}, {"X-Memory-Run": "r" * 201}),
        ("memory_search", {"query": "x"}, {"X-Memory-Conversation": "c" * 5000}),
        ("memory_search", {"query": "x"}, {BEHALF: "u" * 201}),
    ],
    ids=[
        "nul",
        "escape",
        "delete_in_a_list",
        "nul_in_a_key",
        "nested_past_the_limit",
        "nested_far_past_it",
        "overlong_run",
        "overlong_conversation",
        "overlong_on_behalf_of",
    ],
)
def test_input_rest_refuses_is_refused_over_mcp_with_the_same_answer(
    asgi_server, agent_key, name, arguments, headers
):
    runtime = {**conversation_headers(), **headers}
    [result] = over_mcp(asgi_server.url, agent_key, [(name, arguments)], **runtime)
    rest = over_rest(asgi_server.url, agent_key, name, arguments, **runtime)
    assert rest.status_code == 400
    answer = refusal(result)
    assert answer["error"] == "invalid_input"
    assert answer == {**rest.json(), "status": 400}
    assert not written().exists()


def test_a_message_too_deep_for_the_protocol_parser_is_a_json_rpc_400(asgi_server, agent_key):
    """Past the SDK's own parser limit (about 200 levels) the message is not
    JSON-RPC any more: the transport answers a parse error, and the server
    goes on serving."""
    tags = "[" * 100_000 + "]" * 100_000
    message = (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": '
        f'{{"name": "memory_search", "arguments": {{"query": "x", "tags": {tags}}}}}}}'
    )
    response = httpx.post(
        f"{asgi_server.url}/mcp",
        content=message,
        headers={
            "Authorization": f"Token {agent_key}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700
    [after] = over_mcp(asgi_server.url, agent_key, [("memory_search", {"query": "x"})])
    assert not after.is_error


@pytest.mark.parametrize(
    ("characters", "status"), [(1000, 200), (1001, 413)], ids=["at_the_limit", "past_it"]
)
def test_text_past_ascii_meets_the_limits_of_rest_unchanged(
    asgi_server, agent_key, settings, characters, status
):
    """1000 CJK characters are 3000 bytes of UTF-8 and fit a 4 KiB body; as
    ASCII escapes (six bytes each) they would not."""
    settings.MEMORY_CAPTURE_MAX_CHARS = 1000
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 4096
    arguments = {"transcript": ("根本原因是 DNS 缓存过期。" * 100)[:characters]}
    runtime = conversation_headers()
    [result] = over_mcp(asgi_server.url, agent_key, [("memory_capture", arguments)], **runtime)
    # httpx sends `json=` as UTF-8, as REST clients do.
    rest = httpx.post(
        f"{asgi_server.url}/api/v1/tools/memory_capture",
        json=arguments,
        headers={"Authorization": f"Token {agent_key}", **runtime},
    )
    assert rest.status_code == status
    assert result.is_error == (status != 200)
    if result.is_error:
        assert refusal(result) == {**rest.json(), "status": status}
        assert "1001 characters" in rest.json()["detail"]


def test_reads_share_the_key_s_rate_with_rest(asgi_server, agent_key, settings):
    settings.MEMORY_API_READ_RATE = "3/minute"
    search = ("memory_search", {"query": "nginx"})
    assert over_rest(asgi_server.url, agent_key, *search).status_code == 200
    results = over_mcp(asgi_server.url, agent_key, [search, search, search])
    assert [r.is_error for r in results] == [False, False, True]
    answer = refusal(results[2])
    assert answer["error"] == "rate_limited"
    assert answer["status"] == 429
    assert 1 <= answer["retry_after"] <= 61
    assert over_rest(asgi_server.url, agent_key, *search).status_code == 429


def test_writes_have_their_own_rate_over_mcp(asgi_server, agent_key, settings):
    settings.MEMORY_API_WRITE_RATE = "1/minute"
    calls = [
        ("memory_remember", remember_body(path="t/0", content="fact 0")),
        ("memory_remember", remember_body(path="t/1", content="fact 1")),
        ("memory_search", {"query": "fact"}),
    ]
    first, second, read = over_mcp(asgi_server.url, agent_key, calls, **conversation_headers())
    assert not first.is_error
    answer = refusal(second)
    assert (answer["error"], answer["status"]) == ("rate_limited", 429)
    assert 1 <= answer["retry_after"] <= 61
    assert not read.is_error
    assert written().count() == 1


@pytest.fixture
def assistant_key(transactional_db):
    assistant = principal_upsert(username="assistant", service_account=True, act_on_behalf=True)
    return api_key_issue(user=assistant).raw


@pytest.fixture
def alices_document(asgi_server, transactional_db):
    """A document in alice's own store, written by her over MCP."""
    alice = UserFactory(username="alice")
    key = api_key_issue(user=alice).raw
    calls = [
        (
            "memory_remember",
            remember_body(
                store="user",
                path="prefs/timestamps",
                doc_type="user_preference",
                content="Prefers UTC timestamps in incident notes.",
            ),
        )
    ]
    [created] = over_mcp(asgi_server.url, key, calls)
    assert not created.is_error, created
    return created.structured_content["id"]


def test_on_behalf_of_a_user_reads_as_that_user(asgi_server, assistant_key, alices_document):
    calls = [("memory_read", {"id": alices_document}), ("memory_list", {"store": "user"})]
    read, listed = over_mcp(asgi_server.url, assistant_key, calls, **{BEHALF: "alice"})
    assert read.structured_content["id"] == alices_document
    assert [d["id"] for d in listed.structured_content["documents"]] == [alices_document]
    [own] = over_mcp(asgi_server.url, assistant_key, calls[:1])
    assert refusal(own)["error"] == "not_found"


def test_on_behalf_of_without_the_right_is_403(asgi_server, agent_key, alices_document):
    calls = [("memory_read", {"id": alices_document}), ("memory_list", {"store": "user"})]
    for result in over_mcp(asgi_server.url, agent_key, calls, **{BEHALF: "alice"}):
        answer = refusal(result)
        assert (answer["error"], answer["status"]) == ("permission_denied", 403)


@pytest.mark.parametrize("target", ["staff", "root"])
def test_staff_and_superusers_are_never_a_target(asgi_server, assistant_key, target):
    staff = UserFactory(username="staff")
    staff.is_staff = True
    staff.save()
    UserFactory(username="root", is_superuser=True)
    [result] = over_mcp(
        asgi_server.url, assistant_key, [("memory_list", {"store": "user"})], **{BEHALF: target}
    )
    answer = refusal(result)
    assert (answer["error"], answer["status"]) == ("permission_denied", 403)


def test_the_run_cap_counts_every_write_over_mcp(asgi_server, agent_key, settings):
    settings.MEMORY_RUN_WRITE_CAP = 2

    async def scenario():
        async with connected(asgi_server.url, agent_key, **conversation_headers()) as client:
            created = await client.call_tool("memory_remember", remember_body())
            proposal = {
                "id": created.structured_content["id"],
                "target_store": "workspace_runbooks",
                "rationale": "Seen twice.",
            }
            proposed = await client.call_tool("memory_propose_promotion", proposal)
            third = await client.call_tool("memory_remember", remember_body(path="q/2"))
            return created, proposed, third

    created, proposed, third = run(scenario())
    assert not created.is_error and not proposed.is_error
    answer = refusal(third)
    assert (answer["error"], answer["status"]) == ("rate_limited", 429)
    assert answer["retry_after"] > 0
    assert written().count() == 1
    calls = [("memory_remember", remember_body(path="q/3"))]
    [next_run] = over_mcp(asgi_server.url, agent_key, calls, **conversation_headers(run_id="run-2"))
    assert not next_run.is_error


def test_a_service_account_names_its_run_to_write_over_mcp(asgi_server, agent_key):
    calls = [("memory_remember", remember_body()), ("memory_list", {"store": "conversation"})]
    write, read = over_mcp(
        asgi_server.url, agent_key, calls, **{"X-Memory-Conversation": "conv-mcp"}
    )
    answer = refusal(write)
    assert (answer["error"], answer["status"]) == ("invalid_input", 400)
    assert "X-Memory-Run" in answer["fields"]
    assert not read.is_error
    assert not written().exists()


def test_memory_capture_over_mcp_keeps_drafts_and_refuses_secrets(asgi_server, agent_key):
    calls = [
        ("memory_capture", {"messages": INCIDENT_WITH_LEARNINGS}),
        ("memory_capture", {"messages": SECRET_LEAK}),
    ]
    incident, leak = over_mcp(asgi_server.url, agent_key, calls, **conversation_headers())
    assert not incident.is_error, incident
    kept = incident.structured_content["kept"]
    assert [k["kind"] for k in kept] == [
        "incident",
        "learning",
        "learning",
        "preference",
        "preference",
    ]
    stored = MemoryDocument.objects.filter(store__conversation__external_id="conv-mcp")
    assert {str(pk) for pk in stored.values_list("pk", flat=True)} >= {k["id"] for k in kept}
    assert leak.structured_content["skipped"] == [{"reason": "write_blocked", "kind": "learning"}]
    assert TOKEN not in leak.content[0].text


@pytest.mark.parametrize(
    ("arguments", "headers", "status"),
    [
        ({}, conversation_headers(), 400),
        ({"transcript": "Root cause: DNS."}, {"X-Memory-Run": "run-1"}, 400),
        ({"transcript": "x" * 101}, conversation_headers(), 413),
        ({"transcript": "fine\x00"}, conversation_headers(), 400),
    ],
    ids=["neither_form", "no_conversation", "too_large", "nul"],
)
def test_memory_capture_refusals_carry_the_api_code(
    asgi_server, agent_key, settings, arguments, headers, status
):
    settings.MEMORY_CAPTURE_MAX_CHARS = 100
    calls = [("memory_capture", arguments)]
    [result] = over_mcp(asgi_server.url, agent_key, calls, **headers)
    rest = over_rest(asgi_server.url, agent_key, "memory_capture", arguments, **headers)
    assert rest.status_code == status
    assert refusal(result) == {**rest.json(), "status": status}
    assert not written().exists()
