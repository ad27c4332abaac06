"""How a pooled database connection is checked when a request takes it.

Django's pool sends an empty statement on every checkout (psycopg_pool's
`check_connection`), so a connection the server has ended is replaced
instead of failing the request: a round trip on every request for an
event that happens on a restart. A connection resting in the pool has
nothing to read, and a server that ends it says so on its socket (an
error message, then the close), which makes the socket readable. The
check below asks the socket, without a round trip, and sends the empty
statement only then, or when libpq already knows the connection is bad.
"""

import select

from psycopg import Connection, pq
from psycopg_pool import ConnectionPool


def check_on_news(connection: Connection) -> None:
    """Raise for a connection the server has ended; free for an untouched one."""
    if connection.pgconn.status != pq.ConnStatus.OK or _readable(connection.pgconn.socket):
        ConnectionPool.check_connection(connection)


def _readable(socket: int) -> bool:
    poller = select.poll()
    poller.register(socket, select.POLLIN | select.POLLERR | select.POLLHUP)
    return bool(poller.poll(0))
