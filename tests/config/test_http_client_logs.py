"""The app's outgoing requests (webhook deliveries) leave no address in the
log: a receiver's URL may carry a password or a token."""

import httpx

from tests.memory_app.webhooks.receiver import Receiver


def test_an_outgoing_request_leaves_its_address_out_of_the_log(caplog):
    receiver = Receiver()
    server = receiver.serve()
    try:
        address = receiver.url.replace("http://", "http://hook-user:hook-pass@")
        answer = httpx.post(f"{address}?token=query-token", content=b"{}")
    finally:
        server.shutdown()
    assert answer.status_code == 200 and len(receiver.received) == 1
    assert "hook-pass" not in caplog.text and "query-token" not in caplog.text
    assert "127.0.0.1" not in caplog.text
