"""Moments a document carries (expires_at), kept within what Python can read.

PostgreSQL's timestamptz stores years Python's datetime cannot hold: an
expiry sent as 9999-12-31T23:59:59-14:00 is the year 10000 in UTC, and
every later read of its row (the document, the export, the expiry job)
would fail. The API and the forms therefore check a moment in UTC before
it is stored.
"""

from datetime import UTC, datetime

OUT_OF_RANGE = "Must fall between the years 1 and 9999 in UTC."


def in_utc(value: datetime) -> datetime:
    """`value` in UTC (a moment without an offset is taken as UTC); ValueError
    when UTC has no such year."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError(OUT_OF_RANGE) from None
