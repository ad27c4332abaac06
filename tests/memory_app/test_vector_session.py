"""The vector query's session: HNSW options per connection; the driver prepares nothing."""

import pytest
from django.db import connection, connections

from memory_app.embeddings import embed_text
from memory_app.selectors.search import HNSW_EF_SEARCH
from tests.factories import WorkspaceStoreFactory, make_document

pytestmark = pytest.mark.django_db


def test_every_new_connection_starts_with_the_hnsw_options():
    fresh = connections.create_connection("default")
    try:
        with fresh.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('hnsw.ef_search'), current_setting('hnsw.iterative_scan')"
            )
            assert cursor.fetchone() == (str(HNSW_EF_SEARCH), "relaxed_order")
    finally:
        fresh.close()


def test_a_repeated_vector_query_is_never_prepared_into_a_generic_plan():
    """psycopg prepares a statement after `prepare_threshold` runs; a prepared
    vector query may switch to a generic plan that ignores the index (0.4 ms
    to 12 ms, measured). Django leaves the threshold off; keep it that way.
    Only the statements named in selectors/prepared.py are prepared."""
    document = make_document(WorkspaceStoreFactory(), path="a", content="Kafka consumer lag")
    vector = str(embed_text("consumer lag").tolist())
    with connection.cursor() as cursor:
        for _ in range(10):
            cursor.execute(
                "SELECT id FROM memory_app_memorydocument WHERE store_id = %s "
                "ORDER BY embedding <=> %s::vector LIMIT 5",
                [document.store_id, vector],
            )
            assert cursor.fetchone()[0] == document.pk
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements"
            " WHERE strpos(statement, '<=>') > 0 AND name NOT LIKE 'memory\\_%%'"
        )
        assert cursor.fetchone()[0] == 0
    assert connection.connection.prepare_threshold is None
