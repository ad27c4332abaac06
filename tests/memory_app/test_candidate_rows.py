"""A candidate's document, built from its row without `Model.__init__`
(selectors/candidates.py), is the instance `Model.from_db` builds."""

import pytest
from django.db import connection
from django.db.models.signals import post_init

from memory_app.models import MemoryDocument
from memory_app.selectors.candidates import _columns
from memory_app.selectors.search import DOCUMENT_FIELDS
from tests.factories import WorkspaceStoreFactory, make_document


def _row(document: MemoryDocument) -> tuple:
    columns = _columns(DOCUMENT_FIELDS)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {', '.join(f.column for f in columns.fields)}"  # noqa: S608 - model columns
            f" FROM {MemoryDocument._meta.db_table} WHERE id = %s",
            [document.pk],
        )
        return cursor.fetchone()


def _state(document: MemoryDocument) -> dict:
    return {key: value for key, value in document.__dict__.items() if key != "_state"}


@pytest.mark.django_db
def test_the_row_builds_the_instance_from_db_builds():
    stored = make_document(
        WorkspaceStoreFactory(), entities={"service": "payments-api"}, always_inject=True
    )
    columns = _columns(DOCUMENT_FIELDS)
    row = _row(stored)
    built = columns.document(row)
    values = list(row)
    for index, field in columns.converters:
        values[index] = field.from_db_value(values[index], None, connection)
    expected = MemoryDocument.from_db(connection.alias, columns.attnames, values)
    assert _state(built) == _state(expected)
    assert built.get_deferred_fields() == expected.get_deferred_fields()
    assert (built._state.adding, built._state.db) == (False, connection.alias)
    assert built.entities == {"service": "payments-api"}
    assert built.store == stored.store
    assert built == stored


@pytest.mark.django_db
def test_a_listener_to_the_models_signals_gets_its_instances():
    stored = make_document(WorkspaceStoreFactory())
    seen = []

    def listener(sender, instance, **kwargs):
        seen.append(instance)

    post_init.connect(listener, sender=MemoryDocument)
    try:
        built = _columns(DOCUMENT_FIELDS).document(_row(stored))
    finally:
        post_init.disconnect(listener, sender=MemoryDocument)
    assert seen == [built]
