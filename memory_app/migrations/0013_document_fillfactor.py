"""Leave room in each page of the documents table for a row's next version.

A document's row is about 2 kB (its vector alone 1.5 kB, kept inline by
0010), so a page filled to the brim has no room for another version of
one of its rows. An update that changes no indexed column (a hit count
and its last use from memory_mark_used, an importance, a trust level) then
cannot stay on its page: PostgreSQL writes the new version elsewhere and
adds it to every index of the table, where a heap-only (HOT) update adds
it to none. With a quarter of each page kept free the new version fits
beside the old one (docs/benchmarks.md, "Room for a row's next
version"). The setting applies to pages written from now on; existing
pages gain the room as they are rewritten (VACUUM FULL).
"""

from django.db import migrations

TABLE = "memory_app_memorydocument"


class Migration(migrations.Migration):
    dependencies = [("memory_app", "0012_document_terms")]

    operations = [
        migrations.RunSQL(
            f"ALTER TABLE {TABLE} SET (fillfactor = 75)",
            reverse_sql=f"ALTER TABLE {TABLE} RESET (fillfactor)",
        )
    ]
