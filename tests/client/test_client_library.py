"""The client library (client/) against the live server."""

import importlib.util
import inspect
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import get_args, get_origin, get_type_hints, is_typeddict

import httpx
import pytest
from agent_memory_client import (
    Conflict,
    Conversation,
    InvalidInput,
    MemoryClient,
    NotAuthenticated,
    NotFound,
    RateLimited,
    TooLarge,
    WriteBlocked,
)

from memory_app.models import DreamReviewItem, MemoryDocument, MemoryEvent, MemoryUsage
from memory_app.services.principals import api_key_issue
from tests.factories import UserFactory
from tests.live_asgi import LiveAsgiServer

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "ghp_" + "Zq8rT2mK9vXw4LpA7sBn3cDe6fGh1jKl5mNo"
LEARNING = {
    "title": "Nginx crash loop after config reload",
    "content": "The ingress pods crash-loop after a config reload; roll back the configmap.",
    "doc_type": "incident",
}
# The Conversation method of each tool the server lists.
METHODS = {
    "memory_context": "context",
    "memory_search": "search",
    "memory_mark_used": "mark_used",
    "memory_read": "read",
    "memory_list": "list_documents",
    "memory_history": "history",
    "memory_remember": "remember",
    "memory_patch": "patch",
    "memory_delete": "delete",
    "memory_propose_promotion": "propose_promotion",
    "memory_capture": "capture",
}


@pytest.fixture
def key(transactional_db):
    return api_key_issue(user=UserFactory(username="agent", service_account=True)).raw


@pytest.fixture
def memory(live_server, key):
    with MemoryClient(live_server.url, key) as client:
        yield client


def test_a_turn_round_trips_with_headers_set_once(memory):
    turn = memory.conversation("conv-lib", run="run-1")
    saved = turn.remember(**LEARNING)
    assert saved["outcome"] == "created"
    context = turn.context("ingress pods crash after a config reload")
    assert saved["id"] in [document["id"] for document in context["documents"]]
    assert turn.mark_used([saved["id"]]) == 1
    assert turn.search("nginx crash loop")[0]["id"] == saved["id"]
    assert turn.read(saved["id"])["title"] == LEARNING["title"]
    assert [d["id"] for d in turn.list_documents("conversation")["documents"]] == [saved["id"]]
    proposal = turn.propose_promotion(
        saved["id"], target_store="workspace_runbooks", rationale="Seen twice."
    )
    assert DreamReviewItem.objects.filter(pk=proposal["review_item_id"]).exists()
    document = MemoryDocument.objects.get(pk=saved["id"])
    assert document.store.conversation.external_id == "conv-lib"
    usage = MemoryUsage.objects.get(document=document)
    assert (usage.run_id, usage.hit) == ("run-1", True)


def _keywords(method: str) -> set[str]:
    return set(inspect.signature(getattr(Conversation, method)).parameters) - {"self"}


def test_every_argument_of_api_md_is_a_keyword(memory):
    manifest = {tool["name"]: set(tool["input_schema"]["properties"]) for tool in memory.tools()}
    assert manifest.keys() == METHODS.keys()
    assert {tool: _keywords(METHODS[tool]) for tool in manifest} == manifest
    turn = memory.conversation("conv-args", run="run-1")
    first = turn.remember(**LEARNING)
    turn.patch(first["id"], expected_sha256=first["sha256"], content="Roll back the configmap.")
    hits = turn.search("configmap", mode="text", doc_types=["incident"], include_drafts=True)
    assert [hit["id"] for hit in hits] == [first["id"]]
    assert turn.search("configmap", tags=["no-such-tag"]) == []
    assert turn.read(first["id"], version=1)["content"] == LEARNING["content"]
    listed = turn.list_documents("conversation", limit=1, include_inactive=True)
    assert [d["id"] for d in listed["documents"]] == [first["id"]]
    by_path = turn.history(store="conversation", path=first["path"], limit=1)
    assert [v["version"] for v in by_path] == [2]
    captured = turn.capture(
        "### Learnings\n- The payments pool is sized per pod, not per node.\n",
        run_id="run-1",
    )
    assert [kept["title"] for kept in captured["kept"]]
    asked = turn.delete(first["id"], reason="Superseded by the runbook.")
    item = DreamReviewItem.objects.get(pk=asked["review_item_id"])
    assert item.rationale == "Superseded by the runbook."


@pytest.fixture
def answers(memory):
    """One live answer of each tool (and of the event stream), with its optional
    parts present: sources, an expiry, a next cursor, a skipped draft."""
    turn = memory.conversation("conv-types", run="run-1")
    saved = turn.remember(
        **LEARNING,
        recall_hint="ingress crash loop",
        tags=["ingress"],
        entities={"namespace": "ingress"},
        always_inject=True,
        importance=7,
        expires_at="2099-01-01T00:00:00Z",
        source_refs=[{"kind": "url", "ref": "https://runbooks.example/ingress"}],
    )
    turn.remember(title="Payments pool", content="The payments pool is sized per pod.")
    patched = turn.patch(saved["id"], expected_sha256=saved["sha256"], importance=8)
    agent = UserFactory(username="agent")
    MemoryEvent.objects.create(type="memory.test", principal=agent, payload={"n": 1})
    stream = memory.events()
    event = next(stream)
    stream.close()
    return {
        "memory_remember": saved,
        "memory_patch": patched,
        "memory_read": turn.read(saved["id"]),
        "memory_search": turn.search("nginx crash loop"),
        "memory_list": turn.list_documents("conversation", limit=1),
        "memory_history": turn.history(saved["id"]),
        "memory_context": turn.context("ingress pods crash after a config reload"),
        "memory_mark_used": turn.mark_used([saved["id"]]),
        "memory_propose_promotion": turn.propose_promotion(
            saved["id"], target_store="workspace_runbooks", rationale="Seen twice."
        ),
        "memory_delete": turn.delete(saved["id"], reason="Superseded."),
        "memory_capture": turn.capture(
            "Learnings:\n"
            "- Restart node-local-dns when pods cannot resolve cluster names.\n"
            "- Restart node-local-dns when pods cannot resolve cluster names!\n"
        ),
        "events": event,
    }


def _mismatches(value: object, hint: object, where: str) -> list[str]:
    """Where `value` strays from `hint`: keys a TypedDict does not declare, or
    requires and `value` lacks, in nested TypedDicts and lists too."""
    if is_typeddict(hint):
        declared = get_type_hints(hint)
        found = [f"{where}.{key} undeclared" for key in value.keys() - declared.keys()]
        found += [f"{where}.{key} missing" for key in hint.__required_keys__ - value.keys()]
        for key in value.keys() & declared.keys():
            found += _mismatches(value[key], declared[key], f"{where}.{key}")
        return found
    if get_origin(hint) is list:
        (item,) = get_args(hint)
        return [
            mismatch
            for index, element in enumerate(value)
            for mismatch in _mismatches(element, item, f"{where}[{index}]")
        ]
    return []


def test_every_key_the_server_answers_is_declared_in_the_returned_type(memory, answers):
    assert answers.keys() - {"events"} == {tool["name"] for tool in memory.tools()}
    assert answers["memory_context"]["documents"] and answers["memory_capture"]["skipped"]
    assert answers["memory_list"]["next_cursor"]
    returned = {tool: get_type_hints(getattr(Conversation, METHODS[tool])) for tool in METHODS}
    (event,) = get_args(get_type_hints(MemoryClient.events)["return"])
    hints = {tool: hints["return"] for tool, hints in returned.items()} | {"events": event}
    mismatches = [
        mismatch
        for tool, answer in answers.items()
        for mismatch in _mismatches(answer, hints[tool], tool)
    ]
    assert sorted(mismatches) == []


def test_errors_raise_typed_exceptions_with_the_api_fields(memory, live_server):
    turn = memory.conversation("conv-lib", run="run-1")
    with pytest.raises(WriteBlocked) as blocked:
        turn.remember(title="push", content=f"use token {SECRET}")
    assert blocked.value.findings[0]["detector"] == "github_token"
    assert SECRET not in str(blocked.value.body)
    with pytest.raises(NotFound):
        turn.read("00000000-0000-0000-0000-000000000000")
    with pytest.raises(InvalidInput) as invalid:
        turn.search("")
    assert "query" in invalid.value.fields
    stranger = MemoryClient(live_server.url, "ama_wrong")
    with pytest.raises(NotAuthenticated):
        stranger.tools()


def test_a_transcript_over_the_limit_raises_too_large(memory, settings):
    settings.MEMORY_CAPTURE_MAX_CHARS = 100
    with pytest.raises(TooLarge) as refused:
        memory.conversation("conv-big", run="run-1").capture("x" * 101)
    assert refused.value.code == "too_large" and refused.value.status == 413


def test_update_rereads_and_reapplies_after_a_409(memory):
    turn = memory.conversation("conv-lib", run="run-1")
    saved = turn.remember(**LEARNING)
    rival = memory.conversation("conv-lib", run="run-2")
    calls = []

    def add_line(content: str) -> str:
        calls.append(content)
        if len(calls) == 1:  # someone else writes between our read and our patch
            current = rival.read(saved["id"])
            rival.patch(
                saved["id"], expected_sha256=current["sha256"], content=content + "\nRival."
            )
        return content + "\nVerified in staging."

    result = turn.update(saved["id"], add_line)
    assert result["version"] == 3
    assert turn.read(saved["id"])["content"].endswith("Rival.\nVerified in staging.")
    with pytest.raises(Conflict) as stale:
        turn.patch(saved["id"], expected_sha256="0" * 64, content="x")
    assert stale.value.current_sha256 == result["sha256"]


def test_a_429_is_retried_after_retry_after_then_raised(memory, settings):
    settings.MEMORY_RATE_LIMIT_PER_MINUTE = 1
    waits = []
    memory._sleep = waits.append
    memory.max_retry_wait = 120
    turn = memory.conversation("conv-lib", run="run-1")
    turn.remember(**LEARNING)
    with pytest.raises(RateLimited) as limited:
        turn.remember(title="Second", content="Another learning.")
    assert len(waits) == memory.max_retries
    assert all(55 <= wait <= 61 for wait in waits)
    # The last answer's Retry-After, counted down by the server like the others.
    assert 55 <= limited.value.retry_after <= waits[-1]


def test_a_wait_longer_than_allowed_is_not_slept(memory, settings):
    settings.MEMORY_RATE_LIMIT_PER_MINUTE = 1
    waits = []
    memory._sleep = waits.append
    turn = memory.conversation("conv-lib", run="run-1")
    turn.remember(**LEARNING)
    with pytest.raises(RateLimited):
        turn.remember(title="Second", content="Another learning.")
    assert waits == []


def _waits_before_success(retry_after: str) -> list[float]:
    """The waits of a mark_used answered 429 with `retry_after`, then 200."""
    answers = iter(
        [
            httpx.Response(
                429,
                json={"error": "rate_limited", "detail": "slow"},
                headers={"Retry-After": retry_after},
            ),
            httpx.Response(200, json={"updated": 1}),
        ]
    )
    http = httpx.Client(transport=httpx.MockTransport(lambda request: next(answers)))
    client = MemoryClient("http://memory.test", "ama_x", http=http)
    waits: list[float] = []
    client._sleep = waits.append
    assert client.conversation("c").mark_used(["x"]) == 1
    return waits


def test_a_429_then_success_returns_the_answer():
    assert _waits_before_success("2") == [2.0]


def test_a_retry_after_given_as_a_date_is_waited_for():
    later = datetime.now(UTC) + timedelta(seconds=20)
    [wait] = _waits_before_success(format_datetime(later, usegmt=True))
    assert 15 <= wait <= 20


def test_a_client_passed_in_stays_the_callers(memory, live_server, key):
    sent = []
    http = httpx.Client(event_hooks={"request": [sent.append]})
    with MemoryClient(live_server.url, key, http=http) as client:
        client.conversation("conv-own", run="run-1").search("anything")
    assert sent[0].headers["Authorization"] == f"Token {key}"
    assert "Authorization" not in http.headers
    assert not http.is_closed
    http.close()


def test_events_follow_the_stream(memory):
    agent = UserFactory(username="agent")
    first = MemoryEvent.objects.create(type="memory.test", principal=agent)
    second = MemoryEvent.objects.create(type="memory.test", principal=agent)
    stream = memory.events()
    assert [next(stream)["id"], next(stream)["id"]] == [first.id, second.id]
    stream.close()


def test_the_example_agent_loop_runs_against_the_server(live_server, key, capsys):
    path = Path(__file__).resolve().parents[2] / "examples" / "agent_loop.py"
    spec = importlib.util.spec_from_file_location("agent_loop", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    example.run(live_server.url, key)
    assert "proposed for review" in capsys.readouterr().out
    document = MemoryDocument.objects.get(store__scope="conversation")
    assert document.content.endswith("roll back the configmap.")
    assert DreamReviewItem.objects.filter(source_document=document).exists()


def test_events_resume_across_a_server_restart_without_gap_or_duplicate(key):
    agent = UserFactory(username="agent")
    server = LiveAsgiServer()
    server.start()
    before = [MemoryEvent.objects.create(type="memory.test", principal=agent) for _ in range(2)]
    client = MemoryClient(server.url, key)
    stream = client.events()
    seen = [next(stream)["id"], next(stream)["id"]]
    server.stop()
    during = [MemoryEvent.objects.create(type="memory.test", principal=agent) for _ in range(2)]
    restarted = LiveAsgiServer(port=server.port)
    restarted.start()
    try:
        seen += [next(stream)["id"], next(stream)["id"]]
    finally:
        stream.close()
        client.close()
        restarted.stop()
    assert seen == [e.id for e in before + during]
