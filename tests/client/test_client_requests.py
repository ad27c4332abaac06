"""What the client sends and how it reads the answers, against a stand-in server
(httpx.MockTransport); tests/client/ runs it against the real one."""

import itertools
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from agent_memory_client import UNSET, ApiError, MemoryClient, RateLimited
from agent_memory_client import client as client_module

SHA = "a" * 64
DOC_ID = "5f0c6f1e-8d3b-4c2a-9a57-2d7c1b0e4f11"
WRITTEN = {"id": DOC_ID, "sha256": SHA, "outcome": "updated"}


def _client(answer: Callable[[httpx.Request], httpx.Response]) -> tuple[MemoryClient, list]:
    """A client whose requests `answer` serves; the list collects its waits."""
    http = httpx.Client(transport=httpx.MockTransport(answer))
    client = MemoryClient("http://memory.test", "ama_x", http=http)
    waits: list[float] = []
    client._sleep = waits.append
    return client, waits


def _recording(body: object = WRITTEN) -> tuple[MemoryClient, list[tuple[str, dict]]]:
    """A client answering every tool with `body`; the list collects (tool, arguments)."""
    sent: list[tuple[str, dict]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append((request.url.path.rsplit("/", 1)[-1], json.loads(request.content)))
        return httpx.Response(200, json=body)

    client, _ = _client(answer)
    return client, sent


def _answers(
    *responses: httpx.Response | httpx.TransportError,
) -> Callable[[httpx.Request], httpx.Response]:
    """Serves `responses` in order; a transport error is raised, as a dropped connection's."""
    queue: Iterator[httpx.Response | httpx.TransportError] = iter(responses)

    def answer(request: httpx.Request) -> httpx.Response:
        response = next(queue)
        if isinstance(response, httpx.TransportError):
            raise response
        return response

    return answer


def _rate_limited(retry_after: str) -> httpx.Response:
    return httpx.Response(
        429, json={"error": "rate_limited", "detail": "slow"}, headers={"Retry-After": retry_after}
    )


# None is null; what is left out is not sent.


def test_a_patch_sends_none_as_null_to_clear_the_expiry():
    client, sent = _recording()
    client.conversation("c").patch(DOC_ID, expected_sha256=SHA, expires_at=None, importance=8)
    patched = {"id": DOC_ID, "expected_sha256": SHA, "expires_at": None, "importance": 8}
    assert sent == [("memory_patch", patched)]


def test_arguments_left_out_are_not_sent():
    client, sent = _recording()
    turn = client.conversation("c")
    turn.remember(content="Roll back the configmap.", expires_at="2030-01-01T00:00:00Z")
    turn.patch(DOC_ID, expected_sha256=SHA, content="New.")
    assert sent == [
        (
            "memory_remember",
            {
                "store": "conversation",
                "content": "Roll back the configmap.",
                "expires_at": "2030-01-01T00:00:00Z",
            },
        ),
        ("memory_patch", {"id": DOC_ID, "expected_sha256": SHA, "content": "New."}),
    ]


def test_call_sends_none_as_null_and_leaves_unset_out():
    client, sent = _recording()
    client.conversation("c").call("memory_remember", store="user", expires_at=None, path=UNSET)
    assert sent == [("memory_remember", {"store": "user", "expires_at": None})]


# Every argument API.md lists, in each of its forms.


def test_a_document_is_named_by_store_and_path_in_every_method_naming_one():
    client, sent = _recording({**WRITTEN, "versions": [], "content": "Old."})
    turn = client.conversation("c")
    named = {"store": "user", "path": "notes/ingress"}
    turn.read(**named)
    turn.history(**named)
    turn.patch(**named, expected_sha256=SHA, title="Ingress")
    turn.propose_promotion(**named, target_store="workspace_runbooks", rationale="Seen twice.")
    turn.delete(**named)
    assert sent == [
        ("memory_read", named),
        ("memory_history", named),
        ("memory_patch", {**named, "expected_sha256": SHA, "title": "Ingress"}),
        (
            "memory_propose_promotion",
            {**named, "target_store": "workspace_runbooks", "rationale": "Seen twice."},
        ),
        ("memory_delete", named),
    ]


def test_update_by_store_and_path_patches_the_document_it_read():
    client, sent = _recording({**WRITTEN, "content": "Old."})
    client.conversation("c").update(
        store="user", path="notes/ingress", change=lambda content: content + " New."
    )
    assert sent == [
        ("memory_read", {"store": "user", "path": "notes/ingress"}),
        ("memory_patch", {"id": DOC_ID, "expected_sha256": SHA, "content": "Old. New."}),
    ]


def test_update_without_a_change_is_refused():
    client, sent = _recording()
    with pytest.raises(TypeError, match="change"):
        client.conversation("c").update(DOC_ID)
    assert sent == []


def test_a_deletion_sends_its_reason():
    client, sent = _recording({"status": "pending_confirmation", "review_item_id": DOC_ID})
    client.conversation("c").delete(DOC_ID, reason="Superseded by the runbook.")
    assert sent == [("memory_delete", {"id": DOC_ID, "reason": "Superseded by the runbook."})]


def test_neither_id_nor_store_and_path_is_left_to_the_server():
    client, sent = _recording()
    client.conversation("c").delete()
    assert sent == [("memory_delete", {})]


def test_remember_needs_no_title():
    client, sent = _recording()
    client.conversation("c").remember(content="Roll back the configmap.", store="user")
    assert sent == [("memory_remember", {"store": "user", "content": "Roll back the configmap."})]


# Retry-After and unexpected answers.


def _waits_before_success(retry_after: str) -> list[float]:
    client, waits = _client(
        _answers(_rate_limited(retry_after), httpx.Response(200, json={"updated": 1}))
    )
    assert client.conversation("c").mark_used([DOC_ID]) == 1
    return waits


@pytest.mark.parametrize(
    "form",
    ["%a %b %d %H:%M:%S %Y", "%a, %d %b %Y %H:%M:%S -0000"],
    ids=["asctime", "minus-zero-zone"],
)
def test_a_retry_after_date_without_a_zone_is_read_as_utc(form):
    later = datetime.now(UTC) + timedelta(seconds=20)
    [wait] = _waits_before_success(later.strftime(form))
    assert 15 <= wait <= 20


def test_a_success_that_is_not_json_raises_api_error_with_an_excerpt():
    page = "<html><body>Please sign in to the proxy</body></html>" + "x" * 500
    client, _ = _client(lambda request: httpx.Response(200, text=page))
    with pytest.raises(ApiError) as unexpected:
        client.conversation("c").search("ingress")
    assert unexpected.value.status == 200
    assert unexpected.value.code == "unexpected_answer"
    assert "Please sign in to the proxy" in unexpected.value.detail
    assert len(unexpected.value.detail) < 300


# The event stream.


def _stream(*event_ids: int) -> httpx.Response:
    frames = "retry: 2000\n\n" + "".join(
        f"id: {id}\ndata: {json.dumps({'id': id, 'type': 'memory.test'})}\n\n" for id in event_ids
    )
    return httpx.Response(200, text=frames, headers={"Content-Type": "text/event-stream"})


def test_events_wait_out_a_429_and_go_on():
    client, waits = _client(_answers(_rate_limited("2"), _stream(7)))
    stream = client.events()
    assert next(stream)["id"] == 7
    stream.close()
    assert waits == [2.0]


def test_events_raise_after_max_retries_429s_in_a_row():
    client, waits = _client(_answers(*[_rate_limited("2")] * 4))
    with pytest.raises(RateLimited) as limited:
        next(client.events())
    assert waits == [2.0] * client.max_retries
    assert limited.value.retry_after == 2.0


def test_events_count_429s_again_once_a_stream_opened():
    answers = [_rate_limited("2")] * 3 + [_stream(7)] + [_rate_limited("2")] * 3 + [_stream(8)]
    client, waits = _client(_answers(*answers))
    stream = client.events()
    assert [next(stream)["id"], next(stream)["id"]] == [7, 8]
    stream.close()
    assert waits == [2.0] * 6


def test_events_do_not_sleep_a_wait_longer_than_allowed():
    client, waits = _client(_answers(_rate_limited("3600")))
    with pytest.raises(RateLimited) as limited:
        next(client.events())
    assert waits == []
    assert limited.value.retry_after == 3600.0


def test_events_are_read_on_behalf_of_a_user():
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return _stream(7)

    client, _ = _client(answer)
    stream = client.events(after=3, on_behalf_of="alice")
    next(stream)
    stream.close()
    assert seen[0].headers["X-Memory-On-Behalf-Of"] == "alice"
    assert seen[0].headers["Last-Event-ID"] == "3"


def _proxy_error(status: int, retry_after: str | None = None) -> httpx.Response:
    """What a proxy answers while the server behind it restarts: a page, not the API's JSON."""
    headers = {"Retry-After": retry_after} if retry_after else {}
    return httpx.Response(status, text="<html>Bad Gateway</html>", headers=headers)


def _followed(client: MemoryClient, count: int) -> list[int]:
    stream = client.events()
    ids = [next(stream)["id"] for _ in range(count)]
    stream.close()
    return ids


def test_events_go_on_after_a_restart_behind_a_proxy():
    client, waits = _client(_answers(_stream(1, 2), _proxy_error(502), _stream(3)))
    assert _followed(client, 3) == [1, 2, 3]
    assert waits == [1.0]


def test_events_wait_longer_after_each_failed_reconnect_and_start_over_after_an_event():
    dropped = httpx.ConnectError("Connection refused")
    answers = [_proxy_error(502), _proxy_error(503), _proxy_error(504), dropped, _stream(3)]
    client, waits = _client(_answers(*answers, _proxy_error(502), _stream(4)))
    assert _followed(client, 2) == [3, 4]
    assert waits == [1.0, 2.0, 4.0, 8.0, 1.0]


def test_events_wait_at_most_the_cap_between_reconnects():
    client, waits = _client(_answers(*[_proxy_error(503)] * 8, _stream(3)))
    assert _followed(client, 1) == [3]
    assert waits == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]


def test_events_honour_a_proxys_retry_after():
    client, waits = _client(_answers(_proxy_error(503, retry_after="45"), _stream(3)))
    assert _followed(client, 1) == [3]
    assert waits == [45.0]


def test_events_wait_before_reopening_a_stream_that_ended_without_an_event():
    client, waits = _client(_answers(_stream(), _stream(), _stream(3)))
    assert _followed(client, 1) == [3]
    assert waits == [1.0, 2.0]


def test_events_follow_at_once_a_quiet_stream_the_server_ended_after_its_lifetime(monkeypatch):
    clock = itertools.count(0.0, 300.0)  # each look at the clock, five minutes on
    monkeypatch.setattr(client_module.time, "monotonic", lambda: next(clock))
    client, waits = _client(_answers(_stream(), _stream(), _stream(3)))
    assert _followed(client, 1) == [3]
    assert waits == []


def test_events_answered_with_a_page_raise_unexpected_answer_instead_of_asking_again():
    page = httpx.Response(200, text="<html><body>Please sign in to the proxy</body></html>")
    client, waits = _client(_answers(page))
    with pytest.raises(ApiError) as unexpected:
        next(client.events())
    assert unexpected.value.status == 200
    assert unexpected.value.code == "unexpected_answer"
    assert "Please sign in to the proxy" in unexpected.value.detail
    assert waits == []


def test_events_raise_an_error_the_server_answers():
    failing = httpx.Response(500, json={"error": "error", "detail": "Server error."})
    client, waits = _client(_answers(failing))
    with pytest.raises(ApiError) as failed:
        next(client.events())
    assert failed.value.status == 500
    assert waits == []
