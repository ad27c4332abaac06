"""The write quota's run count reads by run; single-column indexes a wider one leads go.

A run's writes were counted through an index leading with the author.
Whenever the statistics put an author's rows at one (an agent that began
writing after the last ANALYZE) the planner read that author's every
version, by the author's own index or by version_author_time, and
filtered on the run: at 3,840 versions the quota statement took 2 ms and
grew with each write. The run's count now reads an index leading with the
run, and its statement keeps the author out of every index's reach
(policy._write_counts), so no estimate can send it through the author's
history. The same for the review items' requests.

The versions table's own indexes on `document_id` (led by the unique
(document, version)) and `author_id` (led by version_author_time) go: one
fewer way to read the wrong rows, and two fewer indexes kept up to date
by each version's insert. Only the indexes go: dropping them through
AlterField would also drop and re-validate both foreign keys.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

INDEXES = {
    "memory_app_memoryversion_author_id_63e76470": "author_id",
    "memory_app_memoryversion_document_id_3813e839": "document_id",
}


class Migration(migrations.Migration):
    dependencies = [
        ("memory_app", "0013_document_fillfactor"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveIndex(model_name="memoryversion", name="version_author_run"),
        migrations.AddIndex(
            model_name="memoryversion",
            index=models.Index(fields=["run_id", "author"], name="version_run_author"),
        ),
        migrations.RemoveIndex(model_name="dreamreviewitem", name="reviewitem_proposer_run"),
        migrations.AddIndex(
            model_name="dreamreviewitem",
            index=models.Index(fields=["run_id", "proposed_by"], name="reviewitem_run_proposer"),
        ),
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    f"DROP INDEX IF EXISTS {name}",
                    f"CREATE INDEX IF NOT EXISTS {name} ON memory_app_memoryversion ({column})",
                )
                for name, column in INDEXES.items()
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="memoryversion",
                    name="author",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                migrations.AlterField(
                    model_name="memoryversion",
                    name="document",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="versions",
                        to="memory_app.memorydocument",
                    ),
                ),
            ],
        ),
    ]
