"""The lexical index moves to a narrow table PostgreSQL keeps itself.

`memory_app_documentterms` holds, per document, its search vector and the
columns a search filters on (models.DocumentTerms says why). A trigger
writes the row when a document is inserted, and rewrites it when one of
those columns or the text changes (the WHEN clause skips updates that
leave them as they were, such as a hit count); the row is deleted with its
document by the foreign key. The existing documents are copied in, and
the documents table's own GIN index goes: no query reads it any more.
"""

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
import django.contrib.postgres.search
import django.db.models.deletion
from django.db import migrations, models

COLUMNS = "id, store_id, state, trust, doc_type, tags, expires_at, search_vector"
KEPT = ("store_id", "state", "trust", "doc_type", "tags", "expires_at", "search_vector")

FUNCTION = f"""
CREATE FUNCTION memory_document_terms_keep() RETURNS trigger AS $$
BEGIN
    INSERT INTO memory_app_documentterms ({COLUMNS})
    VALUES (NEW.id, NEW.store_id, NEW.state, NEW.trust, NEW.doc_type, NEW.tags,
            NEW.expires_at, NEW.search_vector)
    ON CONFLICT (id) DO UPDATE SET
        {", ".join(f"{column} = EXCLUDED.{column}" for column in KEPT)};
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""

CHANGED = " OR ".join(f"OLD.{column} IS DISTINCT FROM NEW.{column}" for column in KEPT)

TRIGGERS = f"""
CREATE TRIGGER memory_document_terms_insert AFTER INSERT ON memory_app_memorydocument
    FOR EACH ROW EXECUTE FUNCTION memory_document_terms_keep();
CREATE TRIGGER memory_document_terms_update AFTER UPDATE ON memory_app_memorydocument
    FOR EACH ROW WHEN ({CHANGED}) EXECUTE FUNCTION memory_document_terms_keep();
"""

FOREIGN_KEY = """
ALTER TABLE memory_app_documentterms ADD CONSTRAINT documentterms_document
    FOREIGN KEY (id) REFERENCES memory_app_memorydocument (id) ON DELETE CASCADE;
"""

BACKFILL = f"""
INSERT INTO memory_app_documentterms ({COLUMNS})
SELECT {COLUMNS} FROM memory_app_memorydocument;
ANALYZE memory_app_documentterms;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memory_app", "0011_document_pinned_any_state"),
    ]

    operations = [
        migrations.CreateModel(
            name="DocumentTerms",
            fields=[
                (
                    "document",
                    models.OneToOneField(
                        db_column="id",
                        db_constraint=False,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to="memory_app.memorydocument",
                    ),
                ),
                ("store_id", models.BigIntegerField()),
                ("state", models.CharField(max_length=20)),
                ("trust", models.CharField(max_length=20)),
                ("doc_type", models.CharField(max_length=20)),
                (
                    "tags",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=64), default=list
                    ),
                ),
                ("expires_at", models.DateTimeField(null=True)),
                ("search_vector", django.contrib.postgres.search.SearchVectorField()),
            ],
        ),
        migrations.RunSQL(FOREIGN_KEY, "ALTER TABLE memory_app_documentterms DROP CONSTRAINT documentterms_document;"),
        migrations.RunSQL(FUNCTION, "DROP FUNCTION memory_document_terms_keep();"),
        migrations.RunSQL(
            TRIGGERS,
            "DROP TRIGGER memory_document_terms_insert ON memory_app_memorydocument;"
            " DROP TRIGGER memory_document_terms_update ON memory_app_memorydocument;",
        ),
        migrations.RunSQL(BACKFILL, migrations.RunSQL.noop),
        migrations.RemoveIndex(
            model_name="memorydocument",
            name="document_search_gin",
        ),
        migrations.AddIndex(
            model_name="documentterms",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["search_vector"], name="terms_search_gin"
            ),
        ),
        migrations.AddIndex(
            model_name="documentterms",
            index=models.Index(fields=["store_id"], name="terms_store"),
        ),
    ]
