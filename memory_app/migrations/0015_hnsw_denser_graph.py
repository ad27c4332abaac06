"""Rebuild the HNSW index with a wider search while it is built.

Built with ef_construction 64, the graph found 70% of the exact ten
nearest documents of the turn's stores at 100,000 documents (ef_search
100); built with 256, 84–89%, for about 0.4 ms more per search
(docs/benchmarks.md, "A denser HNSW graph"). Raising ef_search instead
bought less for more: 79% at 200. The index is built again here, about
35 s per 100,000 documents on two cores; the memory for the build is
raised for this transaction only, so the graph is built in memory.
"""

import pgvector.django.indexes
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memory_app", "0014_version_indexes_led_by_their_composites")]

    operations = [
        migrations.RemoveIndex(model_name="memorydocument", name="document_embedding_hnsw"),
        migrations.RunSQL(
            "SET LOCAL maintenance_work_mem = '256MB'", reverse_sql=migrations.RunSQL.noop
        ),
        migrations.AddIndex(
            model_name="memorydocument",
            index=pgvector.django.indexes.HnswIndex(
                ef_construction=256,
                fields=["embedding"],
                m=16,
                name="document_embedding_hnsw",
                opclasses=["vector_cosine_ops"],
            ),
        ),
    ]
