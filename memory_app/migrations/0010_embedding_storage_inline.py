"""Keep each document's vector in its row, not in the TOAST table.

pgvector's type defaults to external storage: a 384-float vector (1.5 kB)
with the rest of a row passes PostgreSQL's 2 kB threshold and moves out of
line, so every distance computed from the table (dedup's exact scan over a
store, the re-check of index candidates) fetches it through the TOAST
index: three buffer reads a row. MAIN keeps it inline unless the row could
not fit a page otherwise. Rows written before keep their out-of-line vector
until they are next written or re-embedded.
"""

from django.db import migrations

TABLE = "memory_app_memorydocument"


class Migration(migrations.Migration):
    dependencies = [("memory_app", "0009_webhooks")]

    operations = [
        migrations.RunSQL(
            f"ALTER TABLE {TABLE} ALTER COLUMN embedding SET STORAGE MAIN",
            reverse_sql=f"ALTER TABLE {TABLE} ALTER COLUMN embedding SET STORAGE EXTERNAL",
        )
    ]
