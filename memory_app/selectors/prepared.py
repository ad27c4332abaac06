"""Server-side prepared statements for the hand-written statements every
tool call runs (the API key's lookup, the turn's scope, a search's two
candidate statements), and for no other.

PostgreSQL plans a statement anew each time it receives its text: the key's
lookup spent 0.5 ms planning against 0.1 ms running, the turn's scope
1.2 ms against 0.3 ms (docs/benchmarks.md). Django keeps psycopg's automatic
preparing off, and it must stay off: a vector query prepared as written may
switch to a generic plan that ignores the HNSW index (0.4 ms to 12 ms,
measured; tests/memory_app/test_vector_session.py), so the one that is
prepared here is written for its generic plan (candidates._nearest). Only
the statements passed here are prepared, by name, with SQL PREPARE, on
each database connection the first time it runs one; a pooled connection
handed out again keeps them. A connection whose statements were dropped
behind our back (DISCARD ALL, DEALLOCATE ALL) prepares them again.
Without the per-process pool (DATABASE_POOL_SIZE=0, as behind an external
pooler that shares server sessions) statements run unprepared.
"""

import contextlib
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from django.db import ProgrammingError, connection
from psycopg import Pipeline
from psycopg.errors import InvalidSqlStatementName

_PLACEHOLDER = re.compile(r"%%|%\((\w+)\)s|%s")

# The statements each open connection holds, by the driver's connection
# object: a new connection (pool refill, reconnect) starts with none.
_held: "weakref.WeakKeyDictionary[object, set[str]]" = weakref.WeakKeyDictionary()
# Connections that found a statement gone (DEALLOCATE, DISCARD ALL): one or
# all may have gone, so the server is asked which are left before the next
# statement runs, and none is prepared twice.
_unsure: weakref.WeakSet = weakref.WeakSet()


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


def execute_prepared[T](
    cursor, statement: Prepared, params, meanwhile: Callable[[], T] | None = None
) -> T | None:
    """Run `statement` on `cursor` (a cursor of the default connection).

    With `meanwhile` the statement is sent in pipeline mode and `meanwhile()`
    runs while the server works on it; its result is returned, and the
    statement's rows are on the cursor.
    """
    if not connection.settings_dict.get("OPTIONS", {}).get("pool"):
        return execute_meanwhile(cursor, statement.sql, params, meanwhile)
    driver = connection.connection
    held = _held.setdefault(driver, set())
    if driver in _unsure:
        _learn_held(cursor, held)
    if statement.name not in held:
        cursor.execute(statement.prepare)
        held.add(statement.name)
    done: list = []
    try:
        return execute_meanwhile(cursor, statement.execute, params, meanwhile, done)
    except ProgrammingError as error:
        if not isinstance(error.__cause__, InvalidSqlStatementName):
            raise
        _unsure.add(driver)
        # Inside a transaction the failure has aborted it: the caller's
        # error stands, and the next call prepares again.
        if connection.in_atomic_block:
            raise
        _learn_held(cursor, held)
        cursor.execute(statement.prepare)
        held.add(statement.name)
        cursor.execute(statement.execute, params)
        if meanwhile is None:
            return None
        return done[0] if done else meanwhile()


def _learn_held(cursor, held: set[str]) -> None:
    """Keep in `held` only the statements the server still holds."""
    cursor.execute("SELECT name FROM pg_prepared_statements")
    held.intersection_update(name for (name,) in cursor.fetchall())
    _unsure.discard(connection.connection)


def execute_meanwhile[T](
    cursor, sql: str, params, meanwhile: Callable[[], T] | None, done: list | None = None
) -> T | None:
    """`sql` executed, with `meanwhile()` run while the server works on it
    (pipeline mode); its result is returned, and put in `done` for a caller
    that retries the statement without running it again."""
    if meanwhile is None:
        cursor.execute(sql, params)
        return None
    pipeline = connection.connection.pipeline() if Pipeline.is_supported() else None
    # The pipeline reports the server's errors when it ends, past the
    # cursor's own translation into Django's errors.
    with connection.wrap_database_errors, pipeline or contextlib.nullcontext():
        cursor.execute(sql, params)
        result = meanwhile()
        if done is not None:
            done.append(result)
    return result
