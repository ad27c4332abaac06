"""A pooled connection's checkout: a round trip only for a connection the
server may have ended (config/database/checkout.py)."""

import time

import psycopg
import pytest
from django.db import connection
from psycopg_pool import ConnectionPool

from config.database.checkout import check_on_news


@pytest.fixture
def round_trips(monkeypatch):
    sent: list[object] = []
    check = ConnectionPool.check_connection
    monkeypatch.setattr(
        ConnectionPool, "check_connection", staticmethod(lambda c: (sent.append(c), check(c)))
    )
    return sent


@pytest.mark.django_db(transaction=True)
def test_a_resting_connection_goes_out_without_a_round_trip(spare, round_trips):
    spare.execute("SELECT 1").fetchall()
    check_on_news(spare)
    assert round_trips == []


@pytest.mark.django_db(transaction=True)
def test_a_connection_the_server_ended_fails_its_check(spare, round_trips):
    pid = spare.info.backend_pid
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])
    with pytest.raises(psycopg.OperationalError):
        check_on_news(spare)
    assert round_trips == [spare]


@pytest.mark.django_db(transaction=True)
def test_a_connection_with_unread_news_is_checked(spare, round_trips):
    """A notice waiting on the socket (here a notification) is read by the round trip."""
    spare.execute("LISTEN checkout_news")
    with connection.cursor() as cursor:
        cursor.execute("NOTIFY checkout_news")
    deadline = time.monotonic() + 5
    while not round_trips and time.monotonic() < deadline:
        check_on_news(spare)
    assert round_trips == [spare]
