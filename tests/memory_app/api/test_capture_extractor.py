"""The optional model extractor, against a local OpenAI-compatible stub server."""

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memory_app.models import MemoryDocument
from tests.memory_app.api.capture_transcripts import SECRET_LEAK, TOKEN

pytestmark = pytest.mark.django_db

ANSWER = {
    "drafts": [
        {
            "kind": "learning",
            "title": "Registry 401s mean an expired token",
            "content": "CI registry pushes fail with 401 when the 90-day token expires.",
            "quote": "Registry tokens expire after 90 days",
        },
        {
            "kind": "learning",
            "title": "Invented",
            "content": "The registry is down every Friday.",
            "quote": "the registry goes down every Friday",
        },
        {"kind": "gossip", "title": "x", "content": "y", "quote": "z"},
        "Registry tokens expire after 90 days",
    ]
}


class StubChat(BaseHTTPRequestHandler):
    requests: list = []

    def do_POST(self):
        length = int(self.headers["Content-Length"])
        StubChat.requests.append(
            {
                "path": self.path,
                "authorization": self.headers.get("Authorization"),
                "body": json.loads(self.rfile.read(length)),
            }
        )
        reply = json.dumps({"choices": [{"message": {"content": json.dumps(ANSWER)}}]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(reply.encode())

    def log_message(self, *args):
        pass


@pytest.fixture
def stub_url():
    StubChat.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), StubChat)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_off_by_default_no_request_is_made(tools, stub_url):
    body = tools.ok("memory_capture", {"messages": SECRET_LEAK})
    assert [k["kind"] for k in body["kept"]] == ["learning"]
    assert StubChat.requests == []


def test_model_drafts_are_kept_only_when_their_quote_is_in_the_transcript(
    tools, stub_url, settings
):
    settings.MEMORY_CAPTURE_LLM_URL = stub_url
    settings.MEMORY_CAPTURE_LLM_MODEL = "stub-model"
    settings.MEMORY_CAPTURE_LLM_API_KEY = "local-test-key"
    body = tools.ok("memory_capture", {"messages": SECRET_LEAK})

    [request] = StubChat.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["model"] == "stub-model"
    assert request["authorization"] == "Bearer local-test-key"
    sent = request["body"]["messages"][1]["content"]
    assert TOKEN not in sent and "[redacted]" in sent

    titles = [k["title"] for k in body["kept"]]
    assert "Registry 401s mean an expired token" in titles
    model_draft = next(k for k in body["kept"] if k["title"].startswith("Registry 401s"))
    refs = tools.ok("memory_read", {"id": model_draft["id"]})["source_refs"]
    assert [r["ref"] for r in refs] == ["run-1#m1:" + span(SECRET_LEAK[1]["content"])]
    reasons = [s["reason"] for s in body["skipped"]]
    assert {"no_source_span", "malformed_draft", "write_blocked"} <= set(reasons)
    # The unknown kind and the bare string: nothing the model proposed goes unmentioned.
    assert reasons.count("malformed_draft") == 2
    assert not MemoryDocument.objects.filter(content__contains="every Friday").exists()


def span(text: str) -> str:
    start = text.index("Registry tokens expire after 90 days")
    return f"{start}-{start + len('Registry tokens expire after 90 days')}"


def test_an_unreachable_model_is_reported_and_the_offline_drafts_still_kept(tools, settings):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    settings.MEMORY_CAPTURE_LLM_URL = f"http://127.0.0.1:{closed_port}/v1"
    settings.MEMORY_CAPTURE_LLM_TIMEOUT = 2
    body = tools.ok("memory_capture", {"messages": SECRET_LEAK})
    assert [k["kind"] for k in body["kept"]] == ["learning"]
    assert {"reason": "extractor_unavailable"} in body["skipped"]
