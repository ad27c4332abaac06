"""What the column statistics say about the lexical index, kept per process.

The lexical side asks two things of every query: how much of the table the
caller's stores hold (which way to read a term's matches, or whether to
read the stores' rows whole) and which of the query's terms are common
(whose matches are not read one by one). Both come from what ANALYZE last
counted on the lexical index table. Read in the search statement itself,
the `pg_stats` view cost more to plan than to run on every query; read
here, once a minute per process, the statement gets plain values. The
figures are estimates either way: autovacuum refreshes them as the table
grows, and a minute's delay changes nothing they decide.
"""

import threading
import time
from dataclasses import dataclass, field

from django.db import connection

from memory_app.models import DocumentTerms

TABLE = DocumentTerms._meta.db_table
# How long a process keeps what it read before reading again, in seconds.
FRESH_FOR = 60.0


@dataclass(frozen=True)
class TermStatistics:
    rows: float
    # Share of the table's rows in each store the statistics count.
    store_share: dict[int, float]
    # Share of the table's rows holding each lexeme the statistics count.
    lexeme_share: dict[str, float]
    # Share of the table's rows in each store they do not count: the
    # planner's own estimate, the rest spread evenly over the other stores.
    other_store_share: float = 0.0
    # `common_arrays` by its arguments: the same stores ask the same again.
    _arrays: dict = field(default_factory=dict, compare=False, repr=False)

    def share_of(self, stores: tuple[int, ...] | None) -> float:
        """The stores' share of the table: 0 when unknown."""
        if stores is None:
            return 0.0
        return sum(self.store_share.get(store, self.other_store_share) for store in stores)

    def rows_in(self, stores: tuple[int, ...] | None) -> float | None:
        """About how many rows the stores hold; None before the table's first ANALYZE."""
        if stores is None or not self.rows:
            return None
        return self.rows * self.share_of(stores)

    def common(self, share: float, at_least: int) -> dict[str, float]:
        """Lexemes estimated in at least `at_least` documents of stores
        holding `share` of the table, with that estimate."""
        documents = self.rows * share
        if documents < at_least:
            return {}
        return {
            lexeme: frequency * documents
            for lexeme, frequency in self.lexeme_share.items()
            if frequency * documents >= at_least
        }

    def common_arrays(self, share: float, at_least: int) -> tuple[str, str]:
        """`common` as two array literals, the lexemes and their estimates,
        written once per scope: the driver spent 0.27 ms turning the two
        lists of 157 values into SQL on every search."""
        key = (share, at_least)
        if key not in self._arrays:
            common = self.common(share, at_least)
            lexemes = ",".join(_quoted(lexeme) for lexeme in common)
            estimates = ",".join(repr(float(df)) for df in common.values())
            self._arrays[key] = (f"{{{lexemes}}}", f"{{{estimates}}}")
        return self._arrays[key]


def _quoted(element: str) -> str:
    """An element of a PostgreSQL array literal, whatever it holds."""
    return '"' + element.replace("\\", "\\\\").replace('"', '\\"') + '"'


_lock = threading.Lock()
_kept: tuple[float, TermStatistics] | None = None


def term_statistics() -> TermStatistics:
    global _kept
    now = time.monotonic()
    kept = _kept
    if kept is not None and now < kept[0]:
        return kept[1]
    statistics = _read()
    with _lock:
        _kept = (now + FRESH_FOR, statistics)
    return statistics


def forget() -> None:
    """Read anew on next use (after an ANALYZE that must show at once)."""
    global _kept
    with _lock:
        _kept = None


def _read() -> TermStatistics:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT (SELECT greatest(reltuples, 0) FROM pg_class WHERE oid = %s::regclass),"
            " s.attname, s.most_common_vals::text::bigint[], s.most_common_freqs,"
            " s.most_common_elems::text::text[], s.most_common_elem_freqs, s.n_distinct"
            " FROM pg_stats AS s WHERE s.schemaname = current_schema() AND s.tablename = %s"
            " AND s.attname IN ('store_id', 'search_vector')",
            [TABLE, TABLE],
        )
        found = cursor.fetchall()
    rows = float(found[0][0]) if found else 0.0
    stores, lexemes, other = {}, {}, 0.0
    for _, column, values, frequencies, elements, element_frequencies, distinct in found:
        if column == "store_id":
            stores = dict(zip(values or (), frequencies or (), strict=True))
            other = unlisted_store_share(stores, distinct, rows)
        elif column == "search_vector" and elements:
            # The element frequencies end with three summary figures.
            lexemes = dict(zip(elements, element_frequencies, strict=False))
    return TermStatistics(rows, stores, lexemes, other)


def unlisted_store_share(listed: dict[int, float], distinct: float, rows: float) -> float:
    """What the planner assumes of a store its statistics do not list: the
    rows the listed stores leave, spread evenly over the other stores
    (`n_distinct`, a negative figure being a share of the rows)."""
    count = -distinct * rows if distinct < 0 else distinct
    others = count - len(listed)
    if others < 1:
        return 0.0
    return max(0.0, 1.0 - sum(listed.values())) / others
