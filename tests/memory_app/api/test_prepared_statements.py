"""The hot hand-written statements run prepared; nothing else does."""

import pytest
from django.db import ProgrammingError, connection, transaction

from memory_app.selectors.prepared import prepared
from memory_app.services.principals import api_key_find, api_key_issue
from tests.factories import WorkspaceStoreFactory, make_document

pytestmark = pytest.mark.django_db


def _prepared_statements() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT name, statement FROM pg_prepared_statements")
        return dict(cursor.fetchall())


def test_a_statement_with_named_parameters_numbers_each_name_once():
    statement = prepared("s", "SELECT %(a)s + %(b)s WHERE %(a)s > 0 AND x LIKE 'y%%'")
    assert statement.prepare == "PREPARE s AS SELECT $1 + $2 WHERE $1 > 0 AND x LIKE 'y%'"
    assert statement.execute == "EXECUTE s(%(a)s, %(b)s)"
    assert prepared("t", "SELECT %s, %s").execute == "EXECUTE t(%s, %s)"


def test_the_hot_statements_are_prepared_and_only_named_ones_read_vectors(tools):
    """The key's lookup with the turn's scope and both candidate statements run
    prepared; a vector is read only by the named scored statement, whose
    nearest-neighbour read is written for its one plan (candidates._nearest),
    never by a statement the driver prepared on its own."""
    make_document(WorkspaceStoreFactory(slug="runbooks"), path="a", content="Kafka consumer lag")
    tools.ok("memory_search", {"query": "consumer lag", "mode": "semantic"})
    tools.ok("memory_context", {"message": "what about consumer lag?"})
    held = _prepared_statements()
    assert "memory_key_turn_scope" in held
    assert [name for name in held if name.startswith("memory_text_side_")]
    vector_reads = [name for name, text in held.items() if "<=>" in text]
    assert vector_reads and all(name.startswith("memory_scored_") for name in vector_reads)


def test_prepared_statements_run_their_generic_plan_from_the_first_call(tools):
    """Planning the text side took longer than running it; PostgreSQL's
    default would plan it afresh for at least its first five calls."""
    make_document(WorkspaceStoreFactory(slug="runbooks"), path="a", content="Kafka consumer lag")
    for _ in range(3):
        tools.ok("memory_search", {"query": "consumer lag", "mode": "hybrid"})
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT sum(generic_plans), sum(custom_plans) FROM pg_prepared_statements"
            " WHERE name LIKE 'memory_%%'"
        )
        generic, custom = cursor.fetchone()
    assert generic >= 3 + 3  # the key's lookup with the turn and the text side, thrice each
    assert custom == 0


def test_a_key_is_found_again_after_its_statement_was_dropped(owner):
    issued = api_key_issue(user=owner)
    assert api_key_find(issued.raw).user == owner
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    # Inside the test's transaction the failed lookup aborts it, as it
    # would any request's; the next lookup prepares again.
    with pytest.raises(ProgrammingError), transaction.atomic():
        api_key_find(issued.raw)
    assert api_key_find(issued.raw).user == owner


def test_after_one_failure_in_a_transaction_every_dropped_statement_is_prepared_again(tools, owner):
    """A statement found gone inside a transaction fails that call; the
    server then says which statements are left, so the next call prepares
    all the dropped ones, not only the one that failed."""
    make_document(WorkspaceStoreFactory(slug="runbooks"), path="a", content="Kafka consumer lag")
    tools.ok("memory_context", {"message": "what about consumer lag?"})
    issued = api_key_issue(user=owner)
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    with pytest.raises(ProgrammingError), transaction.atomic():
        api_key_find(issued.raw)
    body = tools.ok("memory_context", {"message": "what about consumer lag?"})
    assert "Kafka consumer lag" in body["context"]


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_a_dropped_statement_is_prepared_again_at_once(owner):
    issued = api_key_issue(user=owner)
    assert api_key_find(issued.raw).user == owner
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    assert api_key_find(issued.raw).user == owner


@pytest.mark.django_db(transaction=True)
def test_a_statement_prepared_in_a_rolled_back_transaction_stays_prepared(owner):
    issued = api_key_issue(user=owner)
    api_key_find(issued.raw)
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    with pytest.raises(ProgrammingError), transaction.atomic():
        api_key_find(issued.raw)
    with pytest.raises(RuntimeError), transaction.atomic():
        assert api_key_find(issued.raw).user == owner  # prepared again, in here
        raise RuntimeError
    assert "memory_api_key_lookup" in _prepared_statements()
    assert api_key_find(issued.raw).user == owner


@pytest.mark.django_db(transaction=True)
def test_a_pooled_connection_handed_out_again_keeps_its_statements(owner):
    issued = api_key_issue(user=owner)
    assert api_key_find(issued.raw).user == owner
    connection.close()  # back to the pool
    assert api_key_find(issued.raw).user == owner
    assert "memory_api_key_lookup" in _prepared_statements()


@pytest.mark.django_db(transaction=True)
def test_a_search_whose_text_statement_was_dropped_prepares_it_again(tools):
    """The text side runs in pipeline mode while the query is embedded; a
    statement dropped behind its back is reported when the pipeline ends,
    and outside a transaction it is prepared again at once, the others
    left as they are."""
    make_document(WorkspaceStoreFactory(slug="runbooks"), path="a", content="Kafka consumer lag")
    first = tools.ok("memory_search", {"query": "consumer lag"})
    text_side = [name for name in _prepared_statements() if name.startswith("memory_text_side_")]
    with connection.cursor() as cursor:
        for name in text_side:
            cursor.execute(f"DEALLOCATE {name}")
    again = tools.ok("memory_search", {"query": "consumer lag"})
    assert (
        [hit["path"] for hit in again["results"]]
        == ["a"]
        == [hit["path"] for hit in first["results"]]
    )
    # What the second search needed is prepared again under its own name;
    # a variant it did not need (the first search may have run two) waits
    # for a search that does.
    prepared_again = {n for n in _prepared_statements() if n.startswith("memory_text_side_")}
    assert text_side and prepared_again and prepared_again <= set(text_side)
    # The statements that were not dropped are still known to be held.
    tools.ok("memory_context", {"message": "what about consumer lag?"})
