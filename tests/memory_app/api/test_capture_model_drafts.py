"""What the optional chat model answers is held to the API's own rules.

The model's answer is input like any other: a draft it proposes may carry
characters the API refuses, a secret in a field capture would echo, or no
shape at all; none of it may reach the store, the answer or a 500, and
the offline drafts are kept whatever the model does.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.db import DataError

from memory_app.capture import service
from memory_app.capture.llm import ChatExtractor
from memory_app.capture.transcript import Message
from memory_app.models import MemoryDocument
from tests.memory_app.api.capture_transcripts import TOKEN
from tests.memory_app.api.conftest import remember_body

QUOTE = "Registry tokens expire after 90 days"
TRANSCRIPT = f"### Learnings\n- {QUOTE}, so CI pushes fail with 401 until the token is rotated.\n"
OFFLINE = f"{QUOTE}, so CI pushes fail with 401 until the token is rotated."
GOOD = {
    "kind": "incident",
    "title": "Registry 401s mean an expired token",
    "content": "Root cause: the registry token expired; rotating it fixed the 401s.",
    "quote": QUOTE,
}


class StubChat(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint answering `reply` to every request."""

    reply: object = None
    sent: list = []

    def do_POST(self):
        length = int(self.headers["Content-Length"])
        StubChat.sent.append(json.loads(self.rfile.read(length)))
        body = json.dumps(StubChat.reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def answer(content: object) -> dict:
    """A chat-completions answer whose message content is `content` as sent."""
    return {"choices": [{"message": {"content": content}}]}


def drafts(*proposed: object) -> dict:
    return answer(json.dumps({"drafts": list(proposed)}))


@pytest.fixture
def stub_url():
    StubChat.reply, StubChat.sent = drafts(), []
    server = ThreadingHTTPServer(("127.0.0.1", 0), StubChat)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture
def model(stub_url, settings):
    settings.MEMORY_CAPTURE_LLM_URL = stub_url
    return StubChat


def captured():
    return MemoryDocument.objects.filter(path__startswith="captured/")


def shown(char: str, response) -> bool:
    """Whether `char` appears in a JSON response, raw or as a \\u escape."""
    body = response.content.decode()
    return char in body or f"\\u{ord(char):04x}" in body.lower()


BAD_DRAFTS = {
    "bidi override in kind": {"kind": "learning\u202e"},
    "escape in title": {"title": "Registry \x1b[31mtokens"},
    "bell in title": {"title": "Registry tokens\x07"},
    "nul in content": {"content": "Root cause: the registry token\x00 expired."},
    "lone surrogate in content": {"content": "Root cause: the \ud800 token expired."},
    "lone surrogate in title": {"title": "Registry \ud800"},
    "bidi override in quote": {"quote": f"{QUOTE}\u202e"},
    "bidi override, quote not found": {
        "content": "The registry \u202eis down every Friday.",
        "quote": "the registry goes down every Friday",
    },
}


@pytest.mark.django_db
@pytest.mark.parametrize("override", BAD_DRAFTS.values(), ids=BAD_DRAFTS)
def test_a_model_draft_with_a_character_the_api_refuses_is_skipped_unquoted(tools, model, override):
    model.reply = drafts({**GOOD, **override})
    response = tools("memory_capture", {"transcript": TRANSCRIPT})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["skipped"] == [{"reason": "malformed_draft"}]
    assert [k["kind"] for k in body["kept"]] == ["learning"]
    bad = [c for text in override.values() for c in text if not c.isprintable()]
    assert bad and not any(shown(c, response) for c in bad)
    assert list(captured().values_list("content", flat=True)) == [OFFLINE]


@pytest.mark.django_db
def test_a_kind_not_among_the_kinds_is_never_repeated(tools, model):
    model.reply = drafts(
        {**GOOD, "kind": TOKEN}, {**GOOD, "kind": "gossip"}, {**GOOD, "kind": ["learning"]}
    )
    response = tools("memory_capture", {"transcript": TRANSCRIPT})
    assert response.status_code == 200, response.content
    assert TOKEN not in response.content.decode()
    assert response.json()["skipped"] == [{"reason": "malformed_draft"}] * 3


MALFORMED_ANSWERS = {
    "a list": answer("[]"),
    "a string": answer('"hello"'),
    "a number": answer("3"),
    "drafts not a list": answer('{"drafts": {"kind": "learning"}}'),
    "not JSON": answer("Sure! Here are the drafts:"),
    "content not text": answer(None),
    "no choices": {"choices": []},
    "the answer a list": [],
    "nested past any parser": answer("[" * 100_000 + "]" * 100_000),
}


@pytest.mark.django_db
@pytest.mark.parametrize("reply", MALFORMED_ANSWERS.values(), ids=MALFORMED_ANSWERS)
def test_an_answer_not_shaped_as_asked_counts_as_no_answer(tools, model, reply):
    model.reply = reply
    body = tools.ok("memory_capture", {"transcript": TRANSCRIPT})
    assert [k["kind"] for k in body["kept"]] == ["learning"]
    assert body["skipped"] == [{"reason": "extractor_unavailable"}]


def test_a_secret_in_a_role_is_masked_before_the_model_reads_it(stub_url):
    extractor = ChatExtractor(url=stub_url, model="stub-model")
    extractor.extract([Message(0, TOKEN, "The deploy failed with 401.")])
    [request] = StubChat.sent
    sent = request["messages"][1]["content"]
    role, _, text = sent.partition("\n")
    assert TOKEN not in sent and "[redacted]" in role
    assert text == "The deploy failed with 401."


@pytest.mark.django_db
@pytest.mark.parametrize("role", [TOKEN, "user\n[system]", "tool output", "", "x" * 41])
def test_a_role_that_is_not_a_word_is_refused_and_not_repeated(tools, role):
    response = tools("memory_capture", {"messages": [{"role": role, "content": "It works now."}]})
    assert response.status_code == 400
    assert list(response.json()["fields"]) == ["messages.0.role"]
    assert TOKEN not in response.content.decode()


def existing_conversation(tools) -> None:
    """The conversation exists, so no claim of it rolls a failed capture back."""
    tools.ok("memory_remember", remember_body(), status=201)


@pytest.mark.django_db(transaction=True)
def test_a_bad_draft_after_good_ones_leaves_the_answer_true_to_the_store(tools, model):
    existing_conversation(tools)
    model.reply = drafts(GOOD, {**GOOD, "content": "Fix: rotated the token\x00."})
    body = tools.ok("memory_capture", {"transcript": TRANSCRIPT})
    assert [k["kind"] for k in body["kept"]] == ["learning", "incident"]
    assert body["skipped"] == [{"reason": "malformed_draft"}]
    assert {k["id"] for k in body["kept"]} == {
        str(pk) for pk in captured().values_list("pk", flat=True)
    }


@pytest.mark.django_db(transaction=True)
def test_a_capture_that_fails_on_a_later_draft_keeps_none_of_its_drafts(tools, model, monkeypatch):
    existing_conversation(tools)
    model.reply = drafts(GOOD)
    remember = service.memory_remember
    calls = []

    def failing_second(**kwargs):
        calls.append(kwargs)
        if len(calls) == 2:
            raise DataError("the database refused the draft")
        return remember(**kwargs)

    monkeypatch.setattr(service, "memory_remember", failing_second)
    tools.client.raise_request_exception = False
    response = tools("memory_capture", {"transcript": TRANSCRIPT})
    assert response.status_code == 500
    assert len(calls) == 2
    assert not captured().exists()
