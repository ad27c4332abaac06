"""Index the documents' times within their store.

A question about a time ("what did we change last week", "on May 2nd")
gathers the memories written or changed then. Without these the only
ordered read was the HNSW index with the window as a filter: for a window
holding few documents it passed over most of the table, 70 to 80 ms at
100,000 documents against about 10 ms with them (docs/benchmarks.md,
"Questions about a time"). The planner now weighs the window's size
itself: a wide window still walks the HNSW index.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("memory_app", "0015_hnsw_denser_graph")]

    operations = [
        migrations.AddIndex(
            model_name="memorydocument",
            index=models.Index(fields=["store", "created_at"], name="document_store_created"),
        ),
        migrations.AddIndex(
            model_name="memorydocument",
            index=models.Index(fields=["store", "updated_at"], name="document_store_updated"),
        ),
    ]
