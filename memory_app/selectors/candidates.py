"""One statement gathers a query's candidates from every index and scores them.

* **Lexical**: a ranked OR over the query's informative terms, BM25-style.
  The English parser drops stop words and stems; identifiers stay whole
  (`INC-4711` and `max_slot_wal_keep_size` become phrase terms, a
  hyphenated `payments-api` keeps its own lexeme, not its parts). Each
  term reads at most TERM_CAP matches from the GIN index (a LATERAL LIMIT),
  so cost is bounded by terms times cap, never by how many rows match; ts_rank
  runs only on those rows (STACK.md: ranking every match of an OR is the
  cliff). Document frequency is counted in the same read, per term and
  within the caller's stores, so it is always current; a term that reaches
  the cap is common enough that its weight is near zero anyway. Besides the
  score, each document gets its coverage: the share of the query's term
  weight it matches (a term no document holds weighs the most), an absolute
  measure the relevance floor reads, and whether it holds one of the
  query's identifiers.
* **Semantic**: the HNSW cosine index, over vectors of the current model
  only (a row embedded by another model is never compared).
* **Time**: when the question names a time, the memories written then,
  nearest in meaning first.

Every candidate comes back with its lexical score, its cosine distance and
which lists it came from, so re-ranking needs no further query.
"""

import functools
import re
from dataclasses import dataclass, field
from datetime import datetime

from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import QuerySet

from memory_app.embeddings import get_backend
from memory_app.models import DocumentTerms, MemoryDocument
from memory_app.selectors.sql import loaded
from memory_app.selectors.timeframe import Window

TERM_CAP = 400
# The share of all documents the caller's stores must hold for the term
# reads to skip the store index (`_term_reads`); the store test as the
# filter writes it, and as written so no index serves it.
BROAD_SHARE = 0.3
STORE_TEST = "store_id = ANY(%s)"
STORE_TEST_UNINDEXED = "store_id + 0 = ANY(%s)"
# BM25's k1 on ts_rank's log-length-normalised term weight: where a term's
# contribution saturates.
SATURATION = 0.1
MAX_TERMS = 12
# Ticket ids, config keys, error codes: tokens with a digit, dot or underscore.
IDENTIFIER = re.compile(r"(?<![\w.-])(?=[\w.-]*[0-9._])[A-Za-z0-9][\w.-]*[A-Za-z0-9](?![\w-])")
TABLE = MemoryDocument._meta.db_table
TERMS_TABLE = DocumentTerms._meta.db_table


class Columns:
    """The document columns a statement selects, and how a row of them
    becomes a model instance (`Model.from_db` takes values in the model's
    field order, converted)."""

    def __init__(self, fields: tuple[str, ...]) -> None:
        wanted = set(fields)
        self.fields = [f for f in MemoryDocument._meta.concrete_fields if f.attname in wanted]
        self.attnames = [f.attname for f in self.fields]
        # Few fields convert what the driver returns (JSON's text, say).
        self.converters = [(i, f) for i, f in enumerate(self.fields) if hasattr(f, "from_db_value")]
        self.created_at = self.attnames.index("created_at")
        self.updated_at = self.attnames.index("updated_at")

    def document(self, row: tuple) -> MemoryDocument:
        """The instance `from_db` would build from the row (sql.loaded)."""
        values = list(row[: len(self.fields)])
        for index, model_field in self.converters:
            values[index] = model_field.from_db_value(values[index], None, connection)
        return loaded(MemoryDocument, values, self.attnames)


@dataclass
class Found:
    """One candidate: its row, its scores and the lists it came from.

    The model instance is built from the row on first use: the candidates
    under the relevance floor never need one (at 10,000 documents about 20
    of the 50 rows a hybrid query fetches, docs/benchmarks.md).
    """

    row: tuple
    lexical: float
    # Share of the query's informative term weight this document matches, 0 to 1.
    coverage: float
    # Matches one of the query's identifiers (a ticket, a config key) whole.
    identifier: bool
    distance: float | None
    sources: frozenset[str]
    columns: Columns = field(repr=False)

    @functools.cached_property
    def document(self) -> MemoryDocument:
        return self.columns.document(self.row)

    @property
    def moments(self) -> tuple[datetime, datetime]:
        """When the document was written and last changed, without building it."""
        return self.row[self.columns.created_at], self.row[self.columns.updated_at]


def split_identifiers(text: str) -> tuple[list[str], str]:
    """Identifiers (kept whole as phrases) and the rest of the text."""
    identifiers = [token for token in IDENTIFIER.findall(text) if len(token) >= 4]
    return identifiers[:MAX_TERMS], IDENTIFIER.sub(" ", text)


@dataclass(frozen=True)
class Where:
    """A filter on the documents table as SQL on its bare column names: what
    the hot paths hand `gather` instead of a queryset it would compile.

    The lexical reads run it on the narrow lexical index (DocumentTerms), so
    it names only the columns that table carries: store, state, trust,
    doc_type, tags and expiry.

    `stores` are the store ids it keeps (STORE_TEST in `sql`): with them
    the lexical reads can pick their plan by the stores' share of the table
    (`_term_reads`)."""

    sql: str
    params: tuple = ()
    stores: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if self.stores is not None and self.sql.count(STORE_TEST) != 1:
            raise ValueError("A filter with `stores` holds their test exactly once.")

    def unindexed_stores_sql(self) -> str | None:
        """The same filter with the store test no index can serve, or None
        when the stores are not known."""
        if self.stores is None:
            return None
        return self.sql.replace(STORE_TEST, STORE_TEST_UNINDEXED)


def gather(
    documents: QuerySet | Where,
    query_text: str,
    *,
    fields: tuple[str, ...],
    k: int,
    vector: list[float] | None,
    lexical: bool,
    window: Window | None = None,
    pinned: bool = False,
) -> list[Found]:
    """Candidates among `documents`, each with its scores and the lists it came from."""
    try:
        where, where_params = (
            (documents.sql, list(documents.params))
            if isinstance(documents, Where)
            else _where(documents)
        )
    except EmptyResultSet:
        return []
    vector_text = _vector_literal(vector) if vector is not None else None
    ctes: list[str] = []
    params: list = []
    lists: list[str] = []
    if lexical:
        identifiers, rest = split_identifiers(query_text)
        if isinstance(documents, Where):
            terms_where, broad_where = where, documents.unindexed_stores_sql()
        else:
            # A queryset's filter may name any column of the documents table.
            terms_where, broad_where = f"id IN (SELECT id FROM {TABLE} WHERE {where})", None
        ctes.append(_lexical_ctes(terms_where, broad_where))
        params += [identifiers, rest, MAX_TERMS]
        if broad_where is not None:
            params += [BROAD_SHARE, TABLE, list(documents.stores), *where_params, TERM_CAP]
        params += [*where_params, TERM_CAP, TABLE, SATURATION, k]
        lists.append("text")
    if vector_text is not None:
        ctes.append(
            f"semantic AS MATERIALIZED (SELECT id FROM {TABLE} WHERE {where} "
            f"AND embedding IS NOT NULL AND embedding_model = %s "
            f"ORDER BY embedding <=> %s::vector LIMIT %s)"
        )
        params += [*where_params, get_backend().model_id, vector_text, k]
        lists.append("semantic")
        if window is not None:
            condition, condition_params = _window_condition(window)
            ctes.append(
                f"timed AS MATERIALIZED (SELECT id FROM {TABLE} WHERE {where} AND {condition} "
                f"AND embedding_model = %s ORDER BY embedding <=> %s::vector LIMIT %s)"
            )
            params += [*where_params, *condition_params, get_backend().model_id, vector_text, k]
            lists.append("time")
    if pinned:
        # memory_context's always-inject documents ride along: no statement of their own.
        ctes.append(
            f"pinned AS MATERIALIZED (SELECT id FROM {TABLE} WHERE {where} AND always_inject)"
        )
        params += where_params
        lists.append("pinned")
    if not lists:
        return []
    selected = _columns(fields)
    columns = ", ".join(f"d.{f.column}" for f in selected.fields)
    union = " UNION ".join(f"SELECT id FROM {_LIST_CTE[name]}" for name in lists)
    flags = ", ".join(f"d.id IN (SELECT id FROM {_LIST_CTE[name]}) AS in_{name}" for name in lists)
    lexical_score = (
        "COALESCE(lex.score, 0), COALESCE(lex.coverage, 0), COALESCE(lex.identifier, false)"
        if lexical
        else "0, 0, false"
    )
    lexical_join = "LEFT JOIN lex ON lex.id = d.id" if lexical else ""
    distance = (
        "CASE WHEN d.embedding_model = %s THEN d.embedding <=> %s::vector END"
        if vector_text
        else "NULL"
    )
    final_params = [get_backend().model_id, vector_text] if vector_text else []
    sql = (
        f"WITH {', '.join(ctes)}, ids AS ({union}) "
        f"SELECT {columns}, {lexical_score}, {distance} AS distance, {flags} "
        f"FROM ids JOIN {TABLE} d ON d.id = ids.id {lexical_join}"
    )
    with connection.cursor() as cursor:
        # The final SELECT's placeholders come after every CTE's.
        cursor.execute(sql, [*params, *final_params])
        rows = cursor.fetchall()
    width = len(selected.fields)
    found = []
    for row in rows:
        lexical_score, coverage, identifier, dist, *in_lists = row[width:]
        sources = frozenset(name for name, hit in zip(lists, in_lists, strict=True) if hit)
        found.append(
            Found(row, float(lexical_score), float(coverage), identifier, dist, sources, selected)
        )
    return found


@functools.cache
def _columns(fields: tuple[str, ...]) -> Columns:
    return Columns(fields)


_LIST_CTE = {"text": "text_top", "semantic": "semantic", "time": "timed", "pinned": "pinned"}


def _term_reads(where: str, broad_where: str | None) -> str:
    """Each term's capped matches among the caller's stores, read from the
    narrow lexical index (DocumentTerms), not the documents' wide rows.

    PostgreSQL plans a term's read before it knows the term, so it always
    intersects the term's GIN bitmap with a bitmap of every document in the
    stores: about 3 ms a term when the stores hold 39,000 of 100,000
    documents. When the stores hold much of the table (`broad_where`, their
    share read from the column statistics in the same statement) the store
    test is written so no index serves it, and the term's matches are read
    until the cap: half the cost there, and many times the cost for small
    stores, which keep the intersection (docs/benchmarks.md).
    """

    def read(condition: str) -> str:
        return (
            f"SELECT id, ts_rank(search_vector, t.q, 1) AS r FROM {TERMS_TABLE}"
            f" WHERE {condition} AND search_vector @@ t.q"
        )

    if broad_where is None:
        return f" {read(where)} LIMIT %s"
    return (
        f" ({read(broad_where)} AND (SELECT broad FROM share) LIMIT %s)"
        f" UNION ALL ({read(where)} AND NOT (SELECT broad FROM share) LIMIT %s)"
    )


def _lexical_ctes(where: str, broad_where: str | None) -> str:
    """terms → per-term capped hits → document frequency → BM25-style score → top k.

    A term without hits gets the weight of a document frequency of zero, so
    the query's total weight counts the words no memory holds.
    """
    share = (
        ""
        if broad_where is None
        else "share AS (SELECT COALESCE(sum(m.f), 0) >= %s AS broad FROM pg_stats AS s"
        " CROSS JOIN LATERAL unnest(s.most_common_vals::text::bigint[], s.most_common_freqs)"
        " AS m(v, f) WHERE s.schemaname = current_schema() AND s.tablename = %s"
        " AND s.attname = 'store_id' AND m.v = ANY(%s)), "
    )
    return (
        "terms AS (SELECT q, bool_or(identifier) AS identifier FROM ("
        " SELECT phraseto_tsquery('english', i) AS q, true AS identifier"
        " FROM unnest(%s::text[]) AS i"
        " UNION ALL"
        " SELECT quote_literal(l)::tsquery, false FROM ts_debug('english', %s) AS p,"
        " unnest(p.lexemes) AS l"
        " WHERE p.alias NOT IN ('hword_part', 'hword_asciipart', 'hword_numpart')"
        ") AS raw WHERE numnode(q) > 0 GROUP BY q LIMIT %s), "
        f"{share}"
        "hits AS MATERIALIZED (SELECT t.q, t.identifier, h.id, h.r"
        f" FROM terms AS t CROSS JOIN LATERAL ({_term_reads(where, broad_where)}) AS h), "
        "collection AS (SELECT greatest(reltuples, 1000) AS n FROM pg_class"
        " WHERE oid = %s::regclass), "
        "df AS (SELECT q, ln(1 + (collection.n - count(*) + 0.5) / (count(*) + 0.5)) AS weight"
        " FROM hits CROSS JOIN collection GROUP BY q, collection.n), "
        "total AS (SELECT sum(COALESCE(df.weight, ln(1 + (collection.n + 0.5) / 0.5))) AS w"
        " FROM terms CROSS JOIN collection LEFT JOIN df USING (q)), "
        "lex AS (SELECT hits.id, sum(df.weight * hits.r / (hits.r + %s)) AS score,"
        " sum(df.weight) / max(total.w) AS coverage, bool_or(hits.identifier) AS identifier"
        " FROM hits JOIN df USING (q) CROSS JOIN total GROUP BY hits.id), "
        "text_top AS (SELECT id FROM lex ORDER BY score DESC LIMIT %s)"
    )


def _where(documents: QuerySet) -> tuple[str, list]:
    """The queryset's WHERE, on the bare table name, for the subqueries above.

    A filter that joins other tables (the document browser's) becomes an id
    subquery, so the WHERE still names this table's columns only.
    """
    if sum(1 for count in documents.query.alias_refcount.values() if count) > 1:
        documents = MemoryDocument.objects.filter(pk__in=documents.values("pk"))
    query = documents.query
    compiler = query.get_compiler(connection=connection)
    sql, params = compiler.compile(query.where)
    return sql.replace(f'"{TABLE}".', ""), list(params)


def _window_condition(window: Window) -> tuple[str, list]:
    if window.month is not None:
        return (
            "(extract(month FROM created_at AT TIME ZONE 'UTC') = %s"
            " AND extract(day FROM created_at AT TIME ZONE 'UTC') = %s)",
            [window.month, window.day],
        )
    return "(created_at BETWEEN %s AND %s OR updated_at BETWEEN %s AND %s)", [
        window.start,
        window.end,
        window.start,
        window.end,
    ]


def _vector_literal(vector: list[float]) -> str:
    return "[" + ",".join(f"{value:.7g}" for value in vector) + "]"


def moment_in(window: Window | None, *moments: datetime) -> bool:
    return window is not None and any(window.contains(m) for m in moments)
