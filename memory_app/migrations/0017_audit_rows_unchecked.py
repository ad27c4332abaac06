"""The audit rows of a turn, written without key checks or unread indexes.

Every memory_context call inserts a dozen usage rows with its trace and
event in one statement. Each row's five foreign keys were checked at the
end of it, each check locking the row it found (the injected documents'
among them). Two of the usage table's indexes were never read on their
own (the document's leads a wider index; nothing reads by the event),
nor was the events' index on the conversation (a wider one leads with
it). Together a quarter to a third of the statement's time
(docs/benchmarks.md, "The audit of a turn"). The models say why the
references stay sound without the checks.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory_app", "0016_document_time_indexes"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="memoryevent",
            name="conversation",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="events",
                to="memory_app.conversation",
            ),
        ),
        migrations.AlterField(
            model_name="memoryusage",
            name="conversation",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="usages",
                to="memory_app.conversation",
            ),
        ),
        migrations.AlterField(
            model_name="memoryusage",
            name="document",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="usages",
                to="memory_app.memorydocument",
            ),
        ),
        migrations.AlterField(
            model_name="memoryusage",
            name="event",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="memory_app.memoryevent",
            ),
        ),
        migrations.AlterField(
            model_name="memoryusage",
            name="principal",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AlterField(
            model_name="memoryusage",
            name="trace",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="usages",
                to="memory_app.contexttrace",
            ),
        ),
    ]
