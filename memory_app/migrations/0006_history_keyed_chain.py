"""History no database credential can rewrite.

- TRUNCATE of versions and source refs is refused too (a statement-level
  trigger), except for a superuser resetting a database on purpose.
- UPDATE is refused unless the transaction declared a history rewrite
  (`memory.history_rewrite`, set by redaction and re-keying only) and only
  text, hashes and links change: never who, when, which version or what kind
  of change.
- The chain becomes keyed (memory_app/hashing.py): every existing history
  that verifies under the old unkeyed links is re-signed with the current
  key; one that does not stays as it is, and `memory_verify` reports it.
"""

import hashlib
import json

from django.db import migrations, models

from memory_app.hashing import chain_key_current, chain_relinked, sha256_text

TABLES = ("memory_app_memoryversion", "memory_app_memorysourceref")
REWRITABLE = (
    "title",
    "recall_hint",
    "content",
    "reason",
    "metadata",
    "sha256",
    "parent_sha256",
    "chain_sha256",
    "chain_key_id",
    "ref",
)

FUNCTION = f"""
CREATE OR REPLACE FUNCTION memory_refuse_history_change() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'UPDATE'
       AND current_setting('memory.history_rewrite', true) = 'on'
       AND to_jsonb(NEW) - ARRAY[{", ".join(f"'{c}'" for c in REWRITABLE)}]
           = to_jsonb(OLD) - ARRAY[{", ".join(f"'{c}'" for c in REWRITABLE)}] THEN
        RETURN NEW;
    END IF;
    IF TG_OP = 'TRUNCATE' AND (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'memory history is append-only: % on % refused', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
"""

PREVIOUS_FUNCTION = """
CREATE OR REPLACE FUNCTION memory_refuse_history_change() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'memory history is append-only: % on % refused', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
"""


def _truncate_trigger(table: str) -> str:
    return (
        f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
        "FOR EACH STATEMENT EXECUTE FUNCTION memory_refuse_history_change();"
    )


def _unkeyed_intact(rows) -> bool:
    previous_chain, previous_sha = "", ""
    for number, row in enumerate(rows, start=1):
        link = json.dumps(
            [
                previous_chain,
                row.version,
                row.change,
                row.sha256,
                row.author_name,
                row.created_at.isoformat(),
            ],
            separators=(",", ":"),
        )
        if (
            row.version != number
            or sha256_text(row.content) != row.sha256
            or row.parent_sha256 != previous_sha
            or hashlib.sha256(link.encode("utf-8")).hexdigest() != row.chain_sha256
        ):
            return False
        previous_chain, previous_sha = row.chain_sha256, row.sha256
    return True


def sign_existing_histories(apps, schema_editor):
    MemoryVersion = apps.get_model("memory_app", "MemoryVersion")
    document_ids = (
        MemoryVersion.objects.filter(chain_key_id="")
        .values_list("document_id", flat=True)
        .distinct()
    )
    if not document_ids.exists():
        return
    key = chain_key_current()
    schema_editor.execute("SELECT set_config('memory.history_rewrite', 'on', true)")
    for document_id in document_ids.iterator():
        rows = list(MemoryVersion.objects.filter(document_id=document_id).order_by("version"))
        if not _unkeyed_intact(rows):
            continue
        for row, link in chain_relinked(rows, key):
            MemoryVersion.objects.filter(pk=row.pk).update(**link, chain_key_id=key.id)
    schema_editor.execute("SELECT set_config('memory.history_rewrite', 'off', true)")


class Migration(migrations.Migration):
    dependencies = [("memory_app", "0005_document_pinned_index")]

    operations = [
        migrations.RemoveConstraint(model_name="memoryversion", name="version_change"),
        migrations.AddField(
            model_name="memoryversion",
            name="chain_key_id",
            field=models.CharField(
                blank=True,
                help_text="Fingerprint of the key that signed the link.",
                max_length=16,
            ),
        ),
        migrations.AlterField(
            model_name="memoryversion",
            name="change",
            field=models.CharField(
                choices=[
                    ("create", "Create"),
                    ("update", "Update"),
                    ("patch", "Patch"),
                    ("promote", "Promote"),
                    ("merge", "Merge"),
                    ("rollback", "Rollback"),
                    ("tombstone", "Tombstone"),
                    ("restore", "Restore"),
                    ("supersede", "Supersede"),
                    ("redact", "Redact"),
                ],
                max_length=20,
            ),
        ),
        migrations.AddConstraint(
            model_name="memoryversion",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    change__in=[
                        "create",
                        "update",
                        "patch",
                        "promote",
                        "merge",
                        "rollback",
                        "tombstone",
                        "restore",
                        "supersede",
                        "redact",
                    ]
                ),
                name="version_change",
            ),
        ),
        migrations.RunSQL(FUNCTION, PREVIOUS_FUNCTION),
        *(
            migrations.RunSQL(
                _truncate_trigger(table), f"DROP TRIGGER {table}_no_truncate ON {table};"
            )
            for table in TABLES
        ),
        migrations.RunPython(sign_existing_histories, migrations.RunPython.noop),
    ]
