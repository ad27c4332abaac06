"""PostgreSQL itself refuses to change or delete history.

Versions and their source refs are append-only: UPDATE and DELETE raise,
whoever issues them (the ORM, raw SQL, psql). TRUNCATE stays possible for
test teardown and deliberate operator resets.
"""

from django.db import migrations

FUNCTION = """
CREATE OR REPLACE FUNCTION memory_refuse_history_change() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'memory history is append-only: % on % refused', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
"""

TABLES = ("memory_app_memoryversion", "memory_app_memorysourceref")


def _trigger(table: str) -> str:
    return (
        f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
        "FOR EACH ROW EXECUTE FUNCTION memory_refuse_history_change();"
    )


class Migration(migrations.Migration):
    dependencies = [("memory_app", "0001_initial")]

    operations = [
        migrations.RunSQL(FUNCTION, "DROP FUNCTION memory_refuse_history_change();"),
        *(
            migrations.RunSQL(
                _trigger(table), f"DROP TRIGGER {table}_append_only ON {table};"
            )
            for table in TABLES
        ),
    ]
