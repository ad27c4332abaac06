"""Server-side prepared statements for the hand-written statements every
tool call runs (the API key's lookup, the turn's scope), and for no other.

PostgreSQL plans a statement anew each time it receives its text: the key's
lookup spent 0.5 ms planning against 0.1 ms running, the turn's scope
1.2 ms against 0.3 ms (docs/benchmarks.md). Django keeps psycopg's automatic
preparing off, and it must stay off: a prepared vector query may switch to
a generic plan that ignores the HNSW index (0.4 ms to 12 ms, measured;
tests/memory_app/test_vector_session.py). So only the statements passed
here are prepared, by name, with SQL PREPARE, on each database connection
the first time it runs one; a pooled connection handed out again keeps
them. A connection whose statements were dropped behind our back (DISCARD
ALL, DEALLOCATE ALL) prepares them again. Without the per-process pool
(DATABASE_POOL_SIZE=0, as behind an external pooler that shares server
sessions) statements run unprepared.
"""

import re
import weakref
from dataclasses import dataclass

from django.db import ProgrammingError, connection
from psycopg.errors import InvalidSqlStatementName

_PLACEHOLDER = re.compile(r"%%|%\((\w+)\)s|%s")

# The statements each open connection holds, by the driver's connection
# object: a new connection (pool refill, reconnect) starts with none.
_held: "weakref.WeakKeyDictionary[object, set[str]]" = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class Prepared:
    name: str
    sql: str  # with the driver's placeholders, as it runs unprepared
    prepare: str  # PREPARE name AS … with $n parameters
    execute: str  # EXECUTE name(…) with the driver's placeholders


def prepared(name: str, sql: str) -> Prepared:
    """`sql` (with %s or %(name)s placeholders) as a statement named `name`."""
    order: list[str | int] = []

    def numbered(match: re.Match) -> str:
        if match.group(0) == "%%":
            return "%"
        key = match.group(1) if match.group(1) is not None else len(order)
        if key not in order:
            order.append(key)
        return f"${order.index(key) + 1}"

    body = _PLACEHOLDER.sub(numbered, sql)
    arguments = ", ".join("%s" if isinstance(key, int) else f"%({key})s" for key in order)
    return Prepared(name, sql, f"PREPARE {name} AS {body}", f"EXECUTE {name}({arguments})")


def execute_prepared(cursor, statement: Prepared, params) -> None:
    """Run `statement` on `cursor` (a cursor of the default connection)."""
    if not connection.settings_dict.get("OPTIONS", {}).get("pool"):
        cursor.execute(statement.sql, params)
        return
    held = _held.setdefault(connection.connection, set())
    if statement.name not in held:
        cursor.execute(statement.prepare)
        held.add(statement.name)
    try:
        cursor.execute(statement.execute, params)
    except ProgrammingError as error:
        if not isinstance(error.__cause__, InvalidSqlStatementName):
            raise
        held.clear()
        # Inside a transaction the failure has aborted it: the caller's
        # error stands, and the next call prepares again.
        if connection.in_atomic_block:
            raise
        cursor.execute(statement.prepare)
        held.add(statement.name)
        cursor.execute(statement.execute, params)
