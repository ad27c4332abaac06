"""Two statements gather a query's candidates from every index and score them.

* **Lexical**: a ranked OR over the query's informative terms, BM25-style.
  The English parser drops stop words and stems; identifiers stay whole
  (`INC-4711` and `max_slot_wal_keep_size` become phrase terms, a
  hyphenated `payments-api` keeps its own lexeme, not its parts). A rare
  term reads at most its cap of matches from the GIN index (a LATERAL LIMIT),
  so cost is bounded by terms times cap, never by how many rows match; ts_rank
  runs only on those rows (STACK.md: ranking every match of an OR is the
  cliff), and its document frequency is counted in the same read, within
  the caller's stores, so it is always current. A common term (the column
  statistics count it in at least the cap's number of those documents) is
  not read on its own: its frequency comes from the statistics and it
  scores the candidates found otherwise (`_lexical_ctes`). Beside the
  semantic list the cap is lower (TERM_CAP_BESIDE_VECTORS): the nearest
  neighbours are candidates the common terms score at full weight, so a
  term's first few hundred matches in the table's order, an arbitrary few
  of its documents, add cost and little else. Besides the score, each
  document gets its coverage: the share of the query's term weight it
  matches (a term no document holds weighs the most), an absolute measure
  the relevance floor reads, and whether it holds one of the query's
  identifiers.
* **Semantic**: the HNSW cosine index, over vectors of the current model
  only (a row embedded by another model is never compared).
* **Time**: when the question names a time, the memories written then,
  nearest in meaning first.

The text side is one statement, the other lists with every candidate's
scores and row the second. The first needs no vector, so it is sent before
the query is embedded and the server reads matches while the model runs
(`_text_side`); the second scores every candidate on the terms the first
weighed. Every candidate comes back with its lexical score, its cosine
distance and which lists it came from, so re-ranking needs no further query.
"""

import functools
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import QuerySet
from django.utils import timezone

from memory_app.embeddings import get_backend, vector_literal
from memory_app.models import DocumentTerms, MemoryDocument
from memory_app.selectors.prepared import Prepared, execute_meanwhile, execute_prepared, prepared
from memory_app.selectors.sql import loaded
from memory_app.selectors.term_statistics import term_statistics
from memory_app.selectors.timeframe import Window

TERM_CAP = 400
# The cap when the semantic list runs too (hybrid search, memory_context):
# on the hard evaluation hybrid recall and MRR are the same at 400, 200
# and 100 (and no lower at 50), and the candidate statement at 10,000
# documents takes half the time at 100 (docs/benchmarks.md, "A lower term
# cap beside the vectors").
TERM_CAP_BESIDE_VECTORS = 100
# The share of all documents the caller's stores must hold for the term
# reads to skip the store index (`Reads`); the store test as the filter
# writes it, and as written so no index serves it.
BROAD_SHARE = 0.3
# Stores holding at most about this many rows are read whole (`Reads`).
SMALL_SCOPE_ROWS = 2000
# Stores holding at most about this many rows have every distance computed
# (`_nearest`): at 100,000 documents, 2,900 rows took p50 2.7 / p95 6.8 ms
# that way against 4.6 / 10.9 ms through the HNSW index, 5,900 rows 8.6
# against 3.0 ms (docs/benchmarks.md, "Exact neighbours in a store of
# a few thousand").
EXACT_NEIGHBOUR_ROWS = 4000
# A question about a calendar day ("on May 2nd") reads that day in each of
# this many past years and the current one.
CALENDAR_YEARS = 10
# The time list holds at least this many memories, the most one answer
# shows (API: limit and max_docs up to 50), so that up to there the first
# results of a question about time do not depend on how many were asked
# for: a memory further in meaning but reviewed ranks above nearer drafts
# once found. The read is the same whatever the limit (a narrow window's
# rows through the time indexes, then a top-N sort; a wide one's through
# the HNSW scan, whose ef_search of 100 covers it); the cost is the second
# statement scoring more rows (limit 3 on the hard evaluation's 825
# memories: p50 20 → 23 ms).
TIME_CANDIDATES = 50
STORE_TEST = "store_id = ANY(%s)"
STORE_TEST_UNINDEXED = "store_id + 0 = ANY(%s)"
# BM25's k1 on ts_rank's log-length-normalised term weight: where a term's
# contribution saturates.
SATURATION = 0.1
MAX_TERMS = 12
# Ticket ids, config keys, error codes: tokens with a digit, dot or underscore.
IDENTIFIER = re.compile(r"(?<![\w.-])(?=[\w.-]*[0-9._])[A-Za-z0-9][\w.-]*[A-Za-z0-9](?![\w-])")
TABLE = MemoryDocument._meta.db_table
# PostgreSQL's bound on a word of a tsquery (MAXSTRLEN), in bytes.
TSQUERY_WORD_BYTES = 2047
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
    (`Reads`) and judge a term common or rare within them, and the nearest
    neighbours theirs (`_nearest`). `narrowed` says it also keeps only some
    types or tags, whose share only a plan made for the values can judge."""

    sql: str
    params: tuple = ()
    stores: tuple[int, ...] | None = None
    narrowed: bool = False

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
    vector: Callable[[], Sequence[float]] | None,
    lexical: bool,
    window: Window | None = None,
    pinned: bool = False,
) -> list[Found]:
    """Candidates among `documents`, each with its scores and the lists it came from.

    `vector` gives the query's vector when called. With the text side on,
    it is called once the text statement is on its way, so the model runs
    while the server reads the terms' matches (`_text_side`).
    """
    try:
        where, where_params = (
            (documents.sql, list(documents.params))
            if isinstance(documents, Where)
            else _where(documents)
        )
    except EmptyResultSet:
        return []
    text = None
    scope_rows = None
    if isinstance(documents, Where):
        statistics = term_statistics()
        scope_rows = statistics.rows_in(documents.stores)
    small = scope_rows is not None and scope_rows <= SMALL_SCOPE_ROWS
    exact = scope_rows is not None and scope_rows <= EXACT_NEIGHBOUR_ROWS
    # The hot paths' filters run the scored statement prepared, on plans
    # chosen here (`_nearest`); a question about time or a filter on types
    # or tags is planned for its values.
    prepare_scored = (
        isinstance(documents, Where)
        and documents.stores is not None
        and not documents.narrowed
        and window is None
    )
    if lexical:
        cap = TERM_CAP if vector is None else TERM_CAP_BESIDE_VECTORS
        if isinstance(documents, Where):
            reads = Reads(
                where,
                where_params,
                cap,
                documents.unindexed_stores_sql(),
                statistics.share_of(documents.stores),
                small=small,
                beside_vectors=vector is not None,
            )
        else:
            # A queryset's filter may name any column of the documents table.
            reads = Reads(f"id IN (SELECT id FROM {TABLE} WHERE {where})", where_params, cap)
        text, query_vector = _text_side(
            reads, query_text, k, vector, prepare=isinstance(documents, Where)
        )
    else:
        query_vector = vector() if vector is not None else None
    vector_text = vector_literal(query_vector) if query_vector is not None else None
    ctes: list[str] = []
    params: list = []
    lists: list[str] = []
    if text is not None:
        # Still readable at this statement's moment: a document deleted or
        # expired since the text statement ran is not served.
        ctes.append(
            f"text_top AS MATERIALIZED (SELECT id FROM {TABLE} WHERE {where}"
            " AND id = ANY(%s::uuid[]))"
        )
        params += [*where_params, text.ids]
        lists.append("text")
    if vector_text is not None:
        nearest_where = where
        if prepare_scored and not exact:
            nearest_where = documents.unindexed_stores_sql()
        read = nearest_read(nearest_where, exact=prepare_scored and exact, k=k)
        ctes.append(f"semantic AS MATERIALIZED (SELECT id FROM ({read}) AS nearest)")
        params += [vector_text, *where_params, get_backend().model_id, vector_text, k]
        lists.append("semantic")
        if window is not None:
            condition, condition_params = _window_condition(window)
            ctes.append(
                f"timed AS MATERIALIZED (SELECT id FROM {TABLE} WHERE {where} AND {condition} "
                f"AND embedding_model = %s ORDER BY embedding <=> %s::vector LIMIT %s)"
            )
            params += [
                *where_params,
                *condition_params,
                get_backend().model_id,
                vector_text,
                max(k, TIME_CANDIDATES),
            ]
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
    union = " UNION ".join(f"SELECT id FROM {_LIST_CTE[name]}" for name in lists)
    ctes.append(f"ids AS ({union})")
    if text is not None:
        ctes.append(_SCORED)
        params += [text.terms, text.identifiers, text.weights, SATURATION, text.total]
    selected = _columns(fields)
    columns = ", ".join(f"d.{f.column}" for f in selected.fields)
    flags = ", ".join(f"d.id IN (SELECT id FROM {_LIST_CTE[name]}) AS in_{name}" for name in lists)
    lexical_score = (
        "COALESCE(lex.score, 0), COALESCE(lex.coverage, 0), COALESCE(lex.identifier, false)"
        if text is not None
        else "0, 0, false"
    )
    lexical_join = "LEFT JOIN lex ON lex.id = d.id" if text is not None else ""
    distance = (
        "CASE WHEN d.embedding_model = %s THEN d.embedding <=> %s::vector END"
        if vector_text
        else "NULL"
    )
    final_params = [get_backend().model_id, vector_text] if vector_text else []
    sql = (
        f"WITH {', '.join(ctes)} "
        f"SELECT {columns}, {lexical_score}, {distance} AS distance, {flags} "
        f"FROM ids JOIN {TABLE} d ON d.id = ids.id {lexical_join}"
    )
    with connection.cursor() as cursor:
        # The final SELECT's placeholders come after every CTE's.
        if prepare_scored:
            execute_prepared(cursor, _named("memory_scored", sql), [*params, *final_params])
        else:
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


# Every candidate scored on every weighted term of the text side: the
# nearest neighbours, dated and pinned documents as much as the text
# side's own top. ts_rank runs on these few rows only.
_SCORED = (
    "weighted AS MATERIALIZED (SELECT q::tsquery AS q, identifier, weight"
    " FROM unnest(%s::text[], %s::bool[], %s::float8[]) AS w(q, identifier, weight)), "
    "lex AS (SELECT id, sum(weight * r / (r + %s)) AS score,"
    " sum(weight) / NULLIF(%s::float8, 0) AS coverage, bool_or(identifier) AS identifier"
    " FROM (SELECT t.id, w.weight, w.identifier, ts_rank(t.search_vector, w.q, 1) AS r"
    f" FROM ids JOIN {TERMS_TABLE} AS t USING (id) CROSS JOIN weighted AS w"
    " WHERE t.search_vector @@ w.q) AS m GROUP BY id)"
)


@dataclass(frozen=True)
class TextSide:
    """What the text statement found: its top documents, and each query
    term that matched somewhere with its BM25 weight, which score every
    candidate in the second statement."""

    ids: list
    terms: list[str]
    identifiers: list[bool]
    weights: list[float]
    # The query's whole term weight, the terms without a match included.
    total: float | None


def _text_side(
    reads: "Reads",
    query_text: str,
    k: int,
    vector: Callable[[], Sequence[float]] | None,
    *,
    prepare: bool,
) -> tuple[TextSide, Sequence[float] | None]:
    """The text statement's answer, and the query's vector computed while
    the server worked on it.

    The statement is sent in pipeline mode, so the call returns once it is
    on its way; the model runs on this core while PostgreSQL reads the
    matches on another, and the answer is read afterwards. Embedding the
    query and reading its terms took about as long as each other, one after
    the other (docs/benchmarks.md).

    With `prepare` (a filter of the hot paths' few shapes) the statement
    runs prepared: it holds no vector, and its plan took longer to make
    than to run at 100,000 documents (docs/benchmarks.md).
    """
    sql, params = _lexical_ctes(reads, query_text, k)
    statement = _named(
        "memory_text_side",
        f"WITH {sql}, weighted AS (SELECT t.q, t.identifier, df.weight"
        " FROM terms AS t JOIN df USING (q))"
        " SELECT ARRAY(SELECT id FROM text_top), agg.terms, agg.identifiers, agg.weights,"
        " (SELECT w FROM total)"
        " FROM (SELECT array_agg(q::text) AS terms, array_agg(identifier) AS identifiers,"
        " array_agg(weight) AS weights FROM weighted) AS agg",
    )
    with connection.cursor() as cursor:
        if prepare:
            query_vector = execute_prepared(cursor, statement, params, vector)
        else:
            query_vector = execute_meanwhile(cursor, statement.sql, params, vector)
        ids, terms, identifiers, weights, total = cursor.fetchone()
    text = TextSide(ids, terms or [], identifiers or [], weights or [], total)
    return text, query_vector


@functools.lru_cache(maxsize=64)
def _named(prefix: str, sql: str) -> Prepared:
    """A candidate statement, named by a digest of its text: each shape of
    the filter (type, tag and draft filters; a broad or small read; which
    lists run) has its own."""
    digest = hashlib.blake2b(sql.encode(), digest_size=8).hexdigest()
    return prepared(f"{prefix}_{digest}", sql)


def _rows_read(k: int) -> int:
    """How many neighbours the index is asked for: k rounded up to a power
    of two, of which the k nearest are kept. The number is written into the
    statement, so its plan knows it (a generic plan's guess at a LIMIT
    parameter is a tenth of the rows, where a sort of them all can look
    cheaper than the index), and a connection holds a few shapes, not one
    per k."""
    return 1 << max(3, (k - 1).bit_length())


def nearest_read(where: str, *, exact: bool, k: int) -> str:
    """`id` and cosine distance `d` of the k nearest documents under `where`,
    nearest first, as the scored statement reads them (`_nearest`,
    `_rows_read`). Parameters: the query's vector, the filter's, the model
    id, the vector again and k."""
    return (
        f"SELECT id, d FROM (SELECT id, embedding <=> %s::vector AS d FROM {TABLE}"
        f" WHERE {where} AND embedding IS NOT NULL AND embedding_model = %s"
        f" ORDER BY {_nearest(exact)} LIMIT {_rows_read(k)}) AS read ORDER BY d LIMIT %s"
    )


def _nearest(exact: bool) -> str:
    """The nearest neighbours' order, as a prepared statement's one plan
    must read them.

    A plan made once for every value of the filter cannot weigh the stores'
    share of the table, so the statement says which read it wants. Across
    many rows the HNSW index, with the store test written so no other index
    serves it: the alternative, a sort of every row in the stores, is the
    plan a generic estimate may pick (0.4 ms to 12 ms, measured). In a
    scope of a few thousand rows (`EXACT_NEIGHBOUR_ROWS`) the distance is
    computed on its rows through the store index, written so the HNSW
    index cannot serve it: an index scan that must pass over the rest of
    the table to find k of them is the slower plan there, and the exact
    order is the better answer.
    """
    return "(embedding <=> %s::vector) + 0" if exact else "embedding <=> %s::vector"


@functools.cache
def _columns(fields: tuple[str, ...]) -> Columns:
    return Columns(fields)


_LIST_CTE = {"text": "text_top", "semantic": "semantic", "time": "timed", "pinned": "pinned"}


@dataclass(frozen=True)
class Reads:
    """How the lexical side reads matches of a query from the narrow lexical
    index (DocumentTerms), within the caller's documents.

    PostgreSQL plans a read before it knows the query, so it always
    intersects the query's GIN bitmap with a bitmap of every document in
    the stores: about 3 ms a term when the stores hold 39,000 of 100,000
    documents. When the stores hold much of the table (their `share`, from
    the column statistics) the store test is written so no index serves it
    (`broad_where`), and the matches are read until the cap: half the cost
    there, and many times the cost for middling stores, which keep the
    intersection. When they hold only a few hundred rows (`small`) the
    index is not read at all: a common word's bitmap covered 60,000 rows
    of 100,000, 5 ms a term, to keep the 200 of one conversation. Their
    rows are read once by the store index and every term tested on them
    (docs/benchmarks.md).
    """

    where: str
    where_params: list
    # At most this many matches of a rare term are read; a term the
    # statistics count in more documents is common.
    cap: int
    broad_where: str | None = None
    share: float = 0.0
    small: bool = False
    # The nearest neighbours are candidates too: no joint read of the
    # common terms (`_lexical_ctes`).
    beside_vectors: bool = False

    def scope(self) -> tuple[str, list]:
        """The CTE holding a small scope's rows, read once (or nothing)."""
        if not self.small:
            return "", []
        return (
            f"scope AS MATERIALIZED (SELECT id, search_vector FROM {TERMS_TABLE}"
            f" WHERE {self.where}), ",
            list(self.where_params),
        )

    def capped(self, query: str, columns: str) -> tuple[str, list]:
        """`columns` of the first `cap` matches of the tsquery expression
        `query`, in the table's order."""
        if self.small:
            return (
                f"SELECT {columns} FROM scope WHERE search_vector @@ {query} LIMIT {int(self.cap)}",
                [],
            )
        broad = self.broad_where is not None and self.share >= BROAD_SHARE
        condition = self.broad_where if broad else self.where
        # The cap is written out: a prepared statement's plan then knows it.
        return (
            f"SELECT {columns} FROM {TERMS_TABLE}"
            f" WHERE {condition} AND search_vector @@ {query} LIMIT {int(self.cap)}",
            list(self.where_params),
        )


def _lexical_ctes(reads: Reads, query_text: str, k: int) -> tuple[str, list]:
    """terms → rare and common → their matches → document frequency →
    BM25-style score of every candidate → top k.

    A term the column statistics count in at least `reads.cap` documents of
    the caller's stores is common: reading its matches would cost most of
    the statement (the whole posting list, then the cap's rows in the table's
    order, an arbitrary few of its documents) and add little, since its
    weight is low. Its document frequency comes from the statistics
    instead, the documents holding every common term are read together, and
    each common term scores every candidate found otherwise (by a rare
    term or together): the full weight on the documents that matter; the
    second statement scores the other lists' candidates on every term
    (`_SCORED`). Without statistics every term is rare and read on its own.

    Beside the nearest neighbours (`reads.beside_vectors`) there is no joint
    read: the neighbours are the candidates the common terms score, and the
    read's cap of matches in the table's order, out of thousands, added an
    arbitrary few for the GIN index's whole intersection of long posting
    lists (about 2 ms of a 3 ms statement at 100,000 documents). Without
    vectors it stays: it is the text list's only source when every term is
    common (docs/decisions.md, "Common terms score the candidates").

    A term without hits gets the weight of a document frequency of zero, so
    the query's total weight counts the words no memory holds.
    """
    identifiers, rest = split_identifiers(query_text)
    lexemes, estimates = term_statistics().common_arrays(reads.share, reads.cap)
    scope, scope_params = reads.scope()
    rare_reads, rare_params = reads.capped("t.q", "id, ts_rank(search_vector, t.q, 1) AS r")
    if reads.beside_vectors:
        together, together_params = (
            "together AS (SELECT NULL::uuid AS id, NULL::tsvector AS search_vector WHERE false), ",
            [],
        )
    else:
        together_reads, together_params = reads.capped("a.q", "id, search_vector")
        together = (
            "together AS MATERIALIZED (SELECT h.id, h.search_vector FROM"
            " (SELECT string_agg(q::text, ' & ')::tsquery AS q FROM common) AS a"
            f" CROSS JOIN LATERAL ({together_reads}) AS h WHERE a.q IS NOT NULL), "
        )
    sql = (
        "terms AS (SELECT q, bool_or(identifier) AS identifier, min(lexeme) AS lexeme FROM ("
        " SELECT phraseto_tsquery('english', i) AS q, true AS identifier, NULL AS lexeme"
        " FROM unnest(%s::text[]) AS i"
        " UNION ALL"
        " SELECT quote_literal(l)::tsquery, false, l FROM ts_debug('english', %s) AS p,"
        " unnest(p.lexemes) AS l"
        " WHERE p.alias NOT IN ('hword_part', 'hword_asciipart', 'hword_numpart')"
        # A longer word is refused by tsquery and never indexed by tsvector.
        f" AND octet_length(l) < {TSQUERY_WORD_BYTES}"
        ") AS raw WHERE numnode(q) > 0 GROUP BY q LIMIT %s), "
        "collection AS (SELECT greatest(reltuples, 1000) AS n FROM pg_class"
        " WHERE oid = %s::regclass), "
        f"{scope}"
        # An estimate, so held under the collection's size.
        "common AS MATERIALIZED (SELECT t.q, t.identifier, least(c.df, collection.n) AS df"
        " FROM terms AS t CROSS JOIN collection"
        " JOIN unnest(%s::text[], %s::float8[]) AS c(lexeme, df) USING (lexeme)), "
        "hits AS MATERIALIZED (SELECT t.q, t.identifier, h.id, h.r FROM terms AS t"
        f" CROSS JOIN LATERAL ({rare_reads}) AS h"
        " WHERE t.q NOT IN (SELECT q FROM common)), "
        f"{together}"
        "pool AS (SELECT id FROM hits EXCEPT SELECT id FROM together), "
        # The other candidates' rows once each, by key; OFFSET 0 keeps the
        # planner from reading every match of a common term to join them.
        "candidate AS (SELECT id, search_vector FROM together UNION ALL"
        f" SELECT * FROM (SELECT id, search_vector FROM pool JOIN {TERMS_TABLE} USING (id)"
        " WHERE EXISTS (SELECT FROM common) OFFSET 0) AS other), "
        "scored AS (SELECT c.q, c.identifier, d.id, ts_rank(d.search_vector, c.q, 1) AS r"
        " FROM candidate AS d CROSS JOIN common AS c WHERE d.search_vector @@ c.q), "
        "matches AS (SELECT q, identifier, id, r FROM hits"
        " UNION ALL SELECT q, identifier, id, r FROM scored), "
        "df AS (SELECT q, ln(1 + (collection.n - count(*) + 0.5) / (count(*) + 0.5)) AS weight"
        " FROM hits CROSS JOIN collection GROUP BY q, collection.n"
        " UNION ALL SELECT q, ln(1 + (collection.n - df + 0.5) / (df + 0.5))"
        " FROM common CROSS JOIN collection), "
        "total AS (SELECT sum(COALESCE(df.weight, ln(1 + (collection.n + 0.5) / 0.5))) AS w"
        " FROM terms CROSS JOIN collection LEFT JOIN df USING (q)), "
        "lex AS (SELECT m.id, sum(df.weight * m.r / (m.r + %s)) AS score,"
        " sum(df.weight) / max(total.w) AS coverage, bool_or(m.identifier) AS identifier"
        " FROM matches AS m JOIN df USING (q) CROSS JOIN total GROUP BY m.id), "
        "text_top AS (SELECT id FROM lex ORDER BY score DESC LIMIT %s)"
    )
    params = [
        identifiers,
        rest,
        MAX_TERMS,
        TABLE,
        *scope_params,
        lexemes,
        estimates,
        *rare_params,
        *together_params,
        SATURATION,
        k,
    ]
    return sql, params


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
    """The window as ranges of the time columns, which their indexes serve:
    with a window that holds few documents the HNSW index would pass over
    most of the table looking for them (70 to 80 ms at 100,000 documents,
    docs/benchmarks.md). A calendar day in any year is that day in each of
    the last CALENDAR_YEARS years, in the current time zone as the window's
    own test reads it (timeframe.Window)."""
    if window.month is not None:
        days = []
        zone = timezone.get_current_timezone()
        this_year = timezone.localdate().year
        for year in range(this_year - CALENDAR_YEARS, this_year + 1):
            try:
                start = datetime(year, window.month, window.day, tzinfo=zone)
            except ValueError:  # 29 February, or a day the month lacks
                continue
            days.append((start, start + timedelta(days=1)))
        if not days:
            return "false", []
        return (
            "(" + " OR ".join(["(created_at >= %s AND created_at < %s)"] * len(days)) + ")",
            [moment for day in days for moment in day],
        )
    return "(created_at BETWEEN %s AND %s OR updated_at BETWEEN %s AND %s)", [
        window.start,
        window.end,
        window.start,
        window.end,
    ]


def moment_in(window: Window | None, *moments: datetime) -> bool:
    return window is not None and any(window.contains(m) for m in moments)
