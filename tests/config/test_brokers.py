"""The zero-setup broker hands a worker whole messages only."""

import sys
import threading
from queue import Empty

import pytest
from kombu import Connection

from config.brokers import TRANSPORT, filesystem_broker


@pytest.fixture
def channels(tmp_path):
    """A producer's channel and a consumer's, on one broker folder."""
    options = filesystem_broker(tmp_path)["broker_transport_options"]
    with (
        Connection(transport=TRANSPORT, transport_options=options) as producer,
        Connection(transport=TRANSPORT, transport_options=options) as consumer,
    ):
        yield producer.default_channel, consumer.default_channel


def test_a_consumer_polling_while_a_message_is_written_finds_nothing_yet(channels, monkeypatch):
    producer, consumer = channels
    module = sys.modules[type(producer).__module__]
    seen = []

    def encode_while_polled(text):
        # The moment the message's bytes are on their way to the disk.
        try:
            seen.append(consumer._get("celery"))
        except Empty:
            seen.append("nothing")
        return text.encode()

    monkeypatch.setattr(module, "str_to_bytes", encode_while_polled)
    producer._put("celery", {"task": "memory_app.tasks.start_dream", "args": ["embed"]})

    assert seen == ["nothing"]
    assert consumer._get("celery") == {"task": "memory_app.tasks.start_dream", "args": ["embed"]}
    assert consumer._size("celery") == 0


def test_a_consumer_polling_without_pause_gets_every_message_whole(channels):
    producer, consumer = channels
    received, errors = [], []
    sent = 500

    def poll() -> None:
        while len(received) + len(errors) < sent:
            try:
                received.append(consumer._get("celery"))
            except Empty:
                continue
            except Exception as error:  # any error is the finding
                errors.append(error)

    reader = threading.Thread(target=poll)
    reader.start()
    for n in range(sent):
        producer._put("celery", {"n": n, "body": "x" * 200})
    reader.join(timeout=30)

    assert errors == []
    assert sorted(message["n"] for message in received) == list(range(sent))


def test_the_app_without_a_broker_url_uses_the_whole_file_transport(settings):
    from config.celery import app

    assert settings.CELERY_BROKER_URL == "filesystem://localhost/"
    with app.connection_for_write() as connection:
        assert type(connection.transport).__name__ == "WholeFileTransport"
    with app.connection_for_write("redis://127.0.0.1:6379/13") as connection:
        assert type(connection.transport).__name__ == "Transport"
        assert connection.transport.driver_type == "redis"
