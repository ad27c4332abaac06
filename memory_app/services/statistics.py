"""Planner statistics brought up to date after a bulk change.

PostgreSQL plans each query from what ANALYZE last counted, and
autovacuum counts again only once enough rows changed, on its own
schedule (a minute apart at the soonest). Right after a bulk import or
re-embed the figures still describe the table as it was: a store's
10,000 new documents counted as none, or their vectors as missing. The
planner then judges the HNSW index not worth it for memory_remember's
duplicate check and reads every document of the store instead (11.6 ms
against 0.5 ms at 10,000 documents, docs/benchmarks.md, "Statistics after
a bulk load"), and the lexical side judges no term common. The bulk
commands therefore count again when they finish; everyday writes leave
it to autovacuum.
"""

from django.db import connection

from memory_app.models import DocumentTerms, MemoryDocument, MemoryVersion
from memory_app.selectors import term_statistics

TABLES = (MemoryDocument, DocumentTerms, MemoryVersion)


def statistics_refresh() -> None:
    """ANALYZE the tables a bulk change fills, and have this process read
    the lexical index's new figures at once. About 0.3 s at 10,000
    documents; ANALYZE samples at most 30,000 rows of a table, so the cost
    grows little beyond."""
    names = ", ".join(connection.ops.quote_name(model._meta.db_table) for model in TABLES)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {names}")
    term_statistics.forget()
