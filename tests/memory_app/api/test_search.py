"""memory_search: hybrid retrieval, filters, ranking properties, isolation."""

from datetime import timedelta
from itertools import batched

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memory_app.embeddings import embed_text
from memory_app.models import DocState, MemoryDocument, Trust
from memory_app.selectors import candidates, search, term_statistics
from memory_app.selectors.term_statistics import TermStatistics, unlisted_store_share
from memory_app.selectors.timeframe import Window
from tests.factories import UserFactory, make_document
from tests.memory_app.api.conftest import prepared_statement, remember_body

pytestmark = pytest.mark.django_db

KAFKA = (
    "Kafka consumer lag grows on the orders topic when a rebalance storm hits; raise "
    "session.timeout.ms and scale consumers to the partition count."
)
REDIS = "Redis cache evictions spike when maxmemory is reached; raise the limit or shorten TTLs."
DNS = "DNS lookups time out intermittently on nodes; switch pods to the node-local DNS cache."
CERTS = "Rotated the edge proxies' certificates and reloaded them one by one."


def _paths(body):
    return [hit["path"] for hit in body["results"]]


def test_it_finds_by_meaning_and_returns_the_documented_fields(tools, runbooks):
    make_document(
        runbooks,
        path="kafka/lag",
        title="Kafka consumer lag",
        content=KAFKA,
        trust=Trust.ADMIN_APPROVED,
        doc_type="runbook",
    )
    make_document(
        runbooks,
        path="redis/evictions",
        title="Redis evictions",
        content=REDIS,
        trust=Trust.ADMIN_APPROVED,
        doc_type="runbook",
    )
    body = tools.ok("memory_search", {"query": "messages pile up behind the consumers"})
    assert _paths(body)[0] == "kafka/lag"
    hit = body["results"][0]
    assert set(hit) >= {
        "id",
        "store",
        "path",
        "title",
        "doc_type",
        "trust",
        "state",
        "always_inject",
        "score",
        "snippet",
        "version",
        "updated_at",
    }
    assert hit["store"] == "workspace_runbooks" and 0 < hit["score"] <= 1


@pytest.mark.parametrize("mode", ["text", "semantic", "hybrid"])
def test_every_mode_finds_an_exact_name(tools, runbooks, mode):
    make_document(
        runbooks,
        path="redis/evictions",
        title="Redis evictions",
        content=REDIS,
        trust=Trust.ADMIN_APPROVED,
    )
    make_document(
        runbooks, path="dns/timeouts", title="DNS timeouts", content=DNS, trust=Trust.ADMIN_APPROVED
    )
    body = tools.ok("memory_search", {"query": "redis maxmemory evictions", "mode": mode})
    assert _paths(body)[0] == "redis/evictions"


def test_reviewed_beats_draft_for_equal_text(tools, runbooks):
    tools.ok(
        "memory_remember",
        remember_body(
            path="kafka/draft", title="Kafka consumer lag", content=KAFKA, doc_type="runbook"
        ),
        status=201,
    )
    make_document(
        runbooks,
        path="kafka/reviewed",
        title="Kafka consumer lag",
        content=KAFKA,
        trust=Trust.ADMIN_APPROVED,
        doc_type="runbook",
    )
    body = tools.ok("memory_search", {"query": "kafka consumer lag rebalance"})
    assert _paths(body)[:2] == ["kafka/reviewed", "kafka/draft"]


def test_tombstoned_and_superseded_documents_never_come_back(tools, runbooks):
    for state, path in [(DocState.TOMBSTONED, "dead"), (DocState.SUPERSEDED, "old")]:
        document = make_document(runbooks, path=path, title="Kafka lag", content=KAFKA)
        MemoryDocument.objects.filter(pk=document.pk).update(state=state)
    assert tools.ok("memory_search", {"query": "kafka consumer lag"})["results"] == []


def test_other_users_and_other_conversations_never_appear(caller_for, runbooks):
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    caller_for(alice).ok("memory_remember", remember_body(content=KAFKA, path="mine"), 201)
    caller_for(alice).ok(
        "memory_remember",
        {"store": "user", "doc_type": "user_preference", "title": "kafka pref", "content": KAFKA},
        201,
    )
    caller_for(alice, conversation="alice-other").ok(
        "memory_remember", remember_body(content=KAFKA, path="elsewhere"), 201
    )
    assert caller_for(bob).ok("memory_search", {"query": "kafka consumer lag"})["results"] == []
    own = caller_for(alice).ok("memory_search", {"query": "kafka consumer lag"})
    assert sorted(_paths(own)) == ["kafka-pref", "mine"]


def test_filters_narrow_the_results(tools, runbooks):
    make_document(
        runbooks,
        path="a",
        title="Kafka lag runbook",
        content=KAFKA,
        doc_type="runbook",
        tags=["kafka"],
        trust=Trust.ADMIN_APPROVED,
    )
    make_document(
        runbooks,
        path="b",
        title="Kafka lag incident",
        content=KAFKA + " INC-1",
        doc_type="incident",
        tags=["incident"],
        trust=Trust.ADMIN_APPROVED,
    )
    tools.ok(
        "memory_remember",
        remember_body(path="c", title="kafka draft", content=KAFKA, doc_type="note"),
        201,
    )
    query = "kafka consumer lag"
    assert _paths(tools.ok("memory_search", {"query": query, "doc_types": ["incident"]})) == ["b"]
    assert _paths(tools.ok("memory_search", {"query": query, "tags": ["kafka"]})) == ["a"]
    assert "c" not in _paths(tools.ok("memory_search", {"query": query, "include_drafts": False}))
    assert _paths(tools.ok("memory_search", {"query": query, "stores": ["conversation"]})) == ["c"]


def test_an_unreadable_store_filter_is_404(tools, payments):
    response = tools("memory_search", {"query": "x", "stores": [payments]})
    assert response.status_code == 404


def test_search_is_bounded_in_queries(tools, runbooks, django_assert_max_num_queries):
    for n in range(40):
        make_document(runbooks, path=f"r/{n}", title=f"Kafka lag {n}", content=f"{KAFKA} {n}")
    # The first search of a shape on a connection prepares its statements.
    tools.ok("memory_search", {"query": "warm up", "limit": 20})
    # API key with its memory permissions, the conversation and the turn's
    # stores (one statement), the text side's statement and the candidates'.
    with django_assert_max_num_queries(3):
        body = tools.ok("memory_search", {"query": "kafka consumer lag", "limit": 20})
    assert len(body["results"]) == 20


def test_the_query_is_embedded_while_the_server_reads_its_terms(
    tools, runbooks, monkeypatch, spare
):
    """When the model runs on the query, PostgreSQL has already been sent the
    text side's statement, as another session sees it: the server works on
    it while the model runs (on a tiny table it may already be done)."""
    make_document(runbooks, path="kafka/lag", title="Kafka consumer lag", content=KAFKA)
    seen = []
    embed = search.embed_text

    def watched(text):
        backend = connection.connection.info.backend_pid
        sql = "SELECT state, query FROM pg_stat_activity WHERE pid = %s"
        seen.append(spare.execute(sql, [backend]).fetchone())
        return embed(text)

    monkeypatch.setattr(search, "embed_text", watched)
    body = tools.ok("memory_search", {"query": "kafka consumer lag"})
    assert _paths(body) == ["kafka/lag"]
    ((state, statement),) = seen
    assert state in ("active", "idle in transaction")
    assert statement.startswith("EXECUTE memory_text_side_")


def test_every_connection_scans_filtered_vector_indexes_to_the_end(db):
    # Set when the connection opens, not per search: outside any transaction.
    with connection.cursor() as cursor:
        cursor.execute("SHOW hnsw.iterative_scan")
        assert cursor.fetchone()[0] == "relaxed_order"


def test_a_question_with_an_identifier_ranks_the_memory_naming_it_first(tools, runbooks):
    for n in range(12):
        make_document(
            runbooks,
            path=f"inc/{n}",
            title=f"Incident INC-47{n:02}",
            content=f"INC-47{n:02}: payments-api returned 502 after a deploy; rolled back.",
        )
    body = tools.ok("memory_search", {"query": "What did we find in INC-4707 last time?"})
    assert body["results"][0]["path"] == "inc/7"


def test_a_whole_sentence_question_finds_by_its_informative_words(tools, runbooks):
    make_document(
        runbooks,
        path="wal",
        title="WAL volume",
        content="A stale replication slot kept WAL; drop it.",
    )
    make_document(
        runbooks, path="dns", title="DNS", content="Node-local DNS cache fixes i/o timeouts."
    )
    body = tools.ok(
        "memory_search",
        {"query": "why does the replication slot keep filling the disk?", "mode": "text"},
    )
    assert [r["path"] for r in body["results"]] == ["wal"]


@pytest.mark.parametrize(
    "query",
    ["a\\b c\\\\d", "it's O'Brien's", "x:* & y | !z", "<-> (a) 'b'", "%s %% %(x)s", "東京 ß"],
)
def test_query_syntax_characters_are_only_words(tools, runbooks, query):
    make_document(runbooks, path="x", title="x", content="payments-api INC-4711 it's a\\b")
    for mode in ("hybrid", "text", "semantic"):
        assert tools("memory_search", {"query": query, "mode": mode}).status_code == 200
    assert tools("memory_context", {"message": query}).status_code == 200


@pytest.mark.parametrize(
    "word",
    ["\u4e2d" * 683, "\uff41" * 700, "a" + "\u4e2d" * 700 + "1", "a" * 2047],
    ids=["cjk", "full-width", "identifier", "ascii"],
)
def test_a_word_too_long_for_a_text_query_is_left_out(tools, runbooks, word):
    make_document(runbooks, path="x", title="Kafka lag", content="Scale the kafka consumers.")
    question = f"kafka {word}"
    if len(question) <= 1000:
        for mode in ("hybrid", "text"):
            body = tools.ok("memory_search", {"query": question, "mode": mode})
            assert [hit["path"] for hit in body["results"]] == ["x"]
    assert tools.ok("memory_context", {"message": question})["documents"]


@pytest.fixture
def analysed_runbooks(runbooks):
    """Forty runbooks sharing words, and column statistics that know the
    store holds every document of the table."""
    for index in range(40):
        make_document(
            runbooks,
            path=f"kafka/lag-{index}",
            title=f"Kafka consumer lag {index}",
            content=f"{KAFKA} Seen on cluster {index}.",
            trust=Trust.ADMIN_APPROVED,
            doc_type="runbook",
        )
    _analyze()
    return runbooks


def _term_reads(tools, monkeypatch, broad_share: float, small_rows: int = 0) -> tuple[list, str]:
    monkeypatch.setattr(candidates, "BROAD_SHARE", broad_share)
    monkeypatch.setattr(candidates, "SMALL_SCOPE_ROWS", small_rows)
    # Above every term's count: each is read on its own.
    monkeypatch.setattr(candidates, "TERM_CAP_BESIDE_VECTORS", 50)
    with CaptureQueriesContext(connection) as queries:
        body = tools.ok("memory_search", {"query": "kafka consumer lag on the orders topic"})
    results = [(hit["path"], hit["score"]) for hit in body["results"]]
    return results, _text_statement(queries)


def _text_statement(queries: CaptureQueriesContext) -> str:
    """The text of the prepared text-side statement the captured call ran."""
    statement = prepared_statement(queries, "memory_text_side_")
    assert statement is not None
    return statement


def test_term_reads_find_the_same_matches_however_the_stores_are_read(
    tools, analysed_runbooks, monkeypatch
):
    """Whether a term's matches are intersected with the store index,
    filtered by store as they are read, or found among the stores' rows
    read whole (chosen by the stores' share of the table in the column
    statistics), the matches and the ranking are the same."""
    broad, broad_statement = _term_reads(tools, monkeypatch, broad_share=0.3)
    narrow, narrow_statement = _term_reads(tools, monkeypatch, broad_share=1.01)
    whole, whole_statement = _term_reads(tools, monkeypatch, broad_share=0.3, small_rows=2000)
    assert broad == narrow == whole and len(broad) == 10
    assert "store_id + 0 = ANY" in broad_statement
    assert "store_id + 0 = ANY" not in narrow_statement
    assert "FROM scope WHERE search_vector @@ t.q" not in narrow_statement
    assert "FROM scope WHERE search_vector @@ t.q" in whole_statement


def test_nearest_neighbours_are_the_same_read_by_the_index_or_computed_in_a_small_scope(
    tools, analysed_runbooks, monkeypatch
):
    """The prepared scored statement's one plan cannot weigh the stores'
    share, so it says how to read: the HNSW index across many rows (no other
    index may serve the store test), every distance computed in a scope of
    a few thousand rows. Both give the same answer."""
    make_document(analysed_runbooks, path="dns/cache", title="DNS", content=DNS)
    question = {"query": "name resolution keeps failing on some nodes", "mode": "semantic"}
    answers, statements = [], []
    for exact_rows in (0, 4000):
        monkeypatch.setattr(candidates, "EXACT_NEIGHBOUR_ROWS", exact_rows)
        with CaptureQueriesContext(connection) as queries:
            body = tools.ok("memory_search", question)
        answers.append([(hit["path"], hit["score"]) for hit in body["results"]])
        statements.append(prepared_statement(queries, "memory_scored_"))
    assert answers[0] == answers[1] and answers[0][0][0] == "dns/cache"
    across, small = statements
    assert "store_id + 0 = ANY" in across and "::vector) + 0" not in across
    assert "::vector) + 0" in small and "store_id + 0 = ANY" not in small


@pytest.mark.parametrize(
    "question",
    [
        {"query": "consumer lag", "tags": ["kafka"]},
        {"query": "consumer lag", "doc_types": ["runbook"]},
        {"query": "what did we change about consumer lag last week"},
    ],
)
def test_a_search_narrowed_by_type_tag_or_time_is_planned_for_its_values(
    tools, analysed_runbooks, question
):
    """How many rows a tag, a type or a time keeps only a plan made for the
    values can weigh: such a search runs its scored statement unprepared."""
    with CaptureQueriesContext(connection) as queries:
        tools.ok("memory_search", question)
    assert prepared_statement(queries, "memory_scored_") is None
    assert [q for q in queries.captured_queries if q["sql"].startswith("WITH text_top")]


def test_a_small_store_is_read_whole_once_the_statistics_count_its_rows(
    tools, runbooks, monkeypatch
):
    monkeypatch.setattr(candidates, "TERM_CAP", 50)
    for index in range(5):
        make_document(runbooks, path=f"lag/{index}", title=f"Lag {index}", content=KAFKA)
    make_document(runbooks, path="dns/0", title="DNS", content=DNS)
    question = {"query": "consumer lag on the orders topic", "mode": "text"}
    with CaptureQueriesContext(connection) as before_statistics:
        before = _paths(tools.ok("memory_search", question))
    _analyze()
    with CaptureQueriesContext(connection) as after_statistics:
        after = _paths(tools.ok("memory_search", question))
    assert before == after and len(after) == 5
    assert "FROM scope" not in _text_statement(before_statistics)
    assert "FROM scope WHERE search_vector @@ t.q" in _text_statement(after_statistics)


def test_stores_the_statistics_do_not_list_are_estimated_as_the_planner_does():
    # 10 stores counted, 0.9 of the rows among them; 20 others share the rest.
    listed = {store: 0.09 for store in range(10)}
    other = unlisted_store_share(listed, distinct=30, rows=100_000)
    assert other == pytest.approx(0.1 / 20)
    statistics = TermStatistics(100_000, listed, {}, other)
    assert statistics.rows_in((0, 50)) == pytest.approx(9000 + 500)
    assert statistics.rows_in(None) is None
    assert TermStatistics(0, {}, {}).rows_in((1,)) is None
    # A negative n_distinct is a share of the rows.
    assert unlisted_store_share({}, distinct=-0.5, rows=1000) == pytest.approx(1 / 500)


def test_the_common_terms_reach_the_statement_as_they_were_counted():
    """The common lexemes and their estimates go to PostgreSQL as array
    literals written once per scope; whatever a lexeme holds comes back
    the same."""
    lexemes = {
        "lag": 0.5,
        "a,b": 0.4,
        'say "hi"': 0.3,
        "back\\slash": 0.2,
        "{x}": 0.1,
        "rare": 0.0001,
    }
    statistics = TermStatistics(1000, {}, lexemes)
    texts, estimates = statistics.common_arrays(0.5, 40)
    assert statistics.common_arrays(0.5, 40) is statistics.common_arrays(0.5, 40)
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::text[], %s::float8[]", [texts, estimates])
        back = dict(zip(*cursor.fetchone(), strict=True))
    assert back == pytest.approx(statistics.common(0.5, 40))
    assert set(back) == {"lag", "a,b", 'say "hi"', "back\\slash", "{x}"}


def _analyze():
    with connection.cursor() as cursor:
        for table in (MemoryDocument._meta.db_table, candidates.TERMS_TABLE):
            cursor.execute(f"ANALYZE {table}")
    term_statistics.forget()


@pytest.mark.parametrize(
    ("mode", "cap"), [("text", "TERM_CAP"), ("hybrid", "TERM_CAP_BESIDE_VECTORS")]
)
def test_common_words_score_every_candidate_not_an_arbitrary_few(
    tools, runbooks, monkeypatch, mode, cap
):
    """Words the column statistics count in many documents are not read one
    by one (only the first few of their matches would be): they score the
    candidates the rare words find, so the memory holding them all ranks
    first even when it is the newest of many. Hybrid search, whose nearest
    neighbours the common words score too, has a cap of its own."""
    monkeypatch.setattr(candidates, cap, 5)
    for index in range(30):
        make_document(runbooks, path=f"lag/{index}", title=f"Lag {index}", content=KAFKA)
    make_document(runbooks, path="zk/notes", title="Zookeeper", content="Zookeeper quorum notes.")
    make_document(
        runbooks,
        path="zk/lag",
        title="Zookeeper and lag",
        content="Zookeeper quorum loss makes kafka consumer lag grow on every topic.",
    )
    _analyze()
    with CaptureQueriesContext(connection) as queries:
        body = tools.ok(
            "memory_search", {"query": "kafka consumer lag after zookeeper trouble", "mode": mode}
        )
    assert _paths(body)[0] == "zk/lag"
    assert "@@ t.q LIMIT 5" in _text_statement(queries)


def _lists_found(store, question: str, *, beside_vectors: bool) -> dict[str, set[str]]:
    """The lists each candidate of `question` in `store` came from, by path."""
    where = candidates.Where(
        f"{candidates.STORE_TEST} AND state = %s",
        ([store.pk], DocState.ACTIVE),
        stores=(store.pk,),
    )
    found = candidates.gather(
        where,
        question,
        fields=("id", "path", "created_at", "updated_at"),
        k=10,
        vector=(lambda: embed_text(question)) if beside_vectors else None,
        lexical=True,
    )
    return {item.document.path: set(item.sources) for item in found}


def test_beside_the_neighbours_common_words_are_not_read_together(runbooks, monkeypatch):
    """Thirty memories hold every word of the question: the joint read could
    return only the first six of them in the table's order, an arbitrary
    few. Beside the nearest neighbours it is not made: the neighbours are
    the candidates, and the words score them. Without vectors it is the
    text list's only source and is made."""
    monkeypatch.setattr(candidates, "TERM_CAP", 6)
    monkeypatch.setattr(candidates, "TERM_CAP_BESIDE_VECTORS", 6)
    for index in range(30):
        make_document(runbooks, path=f"lag/{index}", title=f"Lag {index}", content=KAFKA)
    for index in range(6):
        make_document(runbooks, path=f"dns/{index}", title=f"DNS {index}", content=DNS)
    _analyze()

    hybrid = _lists_found(runbooks, "consumer lag on the topic", beside_vectors=True)
    assert not any("text" in lists for lists in hybrid.values())
    assert len(hybrid) == 10 and all(path.startswith("lag/") for path in hybrid)
    text_only = _lists_found(runbooks, "consumer lag on the topic", beside_vectors=False)
    assert len(text_only) == 6 and all(lists == {"text"} for lists in text_only.values())


def test_a_question_of_common_words_finds_the_memories_holding_them_all(
    tools, runbooks, monkeypatch
):
    monkeypatch.setattr(candidates, "TERM_CAP", 12)
    for index in range(30):
        make_document(runbooks, path=f"lag/{index}", title=f"Lag {index}", content=KAFKA)
    for index in range(30):
        make_document(runbooks, path=f"dns/{index}", title=f"DNS {index}", content=DNS)
    _analyze()
    body = tools.ok("memory_search", {"query": "consumer lag on the topic", "mode": "text"})
    assert len(body["results"]) == 10
    assert all(path.startswith("lag/") for path in _paths(body))


@pytest.mark.parametrize(
    ("question", "other_time", "written"),
    [
        (
            "what happened on May 2nd",
            "what happened on May 3rd",
            lambda now: now.replace(year=now.year - 3, month=5, day=2),
        ),
        (
            "what did we change last week",
            "what did we change yesterday",
            # The previous calendar week's Wednesday.
            lambda now: now - timedelta(days=now.weekday() + 5),
        ),
    ],
)
def test_a_question_about_a_time_finds_what_was_written_then(
    tools, runbooks, question, other_time, written
):
    """Neither its words nor its meaning lead to the memory: only when it
    was written does, read through the time indexes."""
    make_document(runbooks, path="edge/tls", title="Edge certificates", content=CERTS)
    make_document(runbooks, path="kafka/lag", title="Kafka consumer lag", content=KAFKA)
    then = written(timezone.now().replace(hour=12))
    MemoryDocument.objects.filter(path="edge/tls").update(created_at=then, updated_at=then)
    assert "edge/tls" in _paths(tools.ok("memory_search", {"query": question}))
    assert "edge/tls" not in _paths(tools.ok("memory_search", {"query": other_time}))


def test_a_calendar_day_is_read_as_that_day_of_each_recent_year():
    condition, params = candidates._window_condition(Window(month=2, day=29))
    leap_years = [y for y in range(timezone.now().year - 10, timezone.now().year + 1) if y % 4 == 0]
    assert condition.count("created_at >= %s") == len(leap_years) == len(params) // 2
    assert [start.year for start in params[::2]] == leap_years
    assert all(end - start == timedelta(days=1) for start, end in batched(params, 2))
