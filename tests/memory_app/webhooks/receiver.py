"""A local HTTP endpoint that records what it is sent and answers as told."""

import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    answers: deque = field(default_factory=deque)  # status codes to answer, then 200
    location: str = ""  # sent as Location with every answer (a redirect)
    received: list[Received] = field(default_factory=list)
    url: str = ""

    def serve(self) -> ThreadingHTTPServer:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers["Content-Length"])
                receiver.received.append(Received(dict(self.headers), self.rfile.read(length)))
                self.send_response(receiver.answers.popleft() if receiver.answers else 200)
                if receiver.location:
                    self.send_header("Location", receiver.location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server
