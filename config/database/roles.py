"""The app's own PostgreSQL role on the embedded server.

The app connects as a role that owns its database and tables but is not a
superuser, so a leaked app credential cannot switch triggers off for a
session (`session_replication_role`), read server files or truncate history
(docs/decisions.md, "History no credential can rewrite"). The embedded
server's superuser is used only here, to create that role and its database.
"""

import contextlib

import psycopg
from psycopg import errors, sql

# Objects of the app in `public` not owned by the app role: tables (their
# indexes, triggers and owned sequences follow), views, and functions that
# are not part of an extension.
_FOREIGN_RELATIONS = """
SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm')
  AND pg_get_userbyid(c.relowner) <> %(role)s
  AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = c.oid AND d.deptype = 'e')
"""
_FOREIGN_FUNCTIONS = """
SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = 'public' AND pg_get_userbyid(p.proowner) <> %(role)s
  AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
"""
_KINDS = {"r": "TABLE", "p": "TABLE", "v": "VIEW", "m": "MATERIALIZED VIEW"}


def app_role_provision(*, host: str, port: int, superuser: str, role: str, database: str) -> None:
    """Create the role and its database if missing; hand an older database over.

    Idempotent and safe when several processes start at once. A new role gets
    CREATEDB (the test suite creates its own database) and pgvector in
    `template1`, since only a superuser may create that extension.
    """
    with psycopg.connect(
        host=host, port=port, user=superuser, dbname="postgres", autocommit=True
    ) as conn:
        if _role_create(conn, role):
            _vector_in_template(host, port, superuser)
        if database == "postgres":
            return
        row = conn.execute(
            "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = %s", [database]
        ).fetchone()
        if row is None:
            with contextlib.suppress(errors.DuplicateDatabase):
                conn.execute(
                    sql.SQL("CREATE DATABASE {} OWNER {}").format(
                        sql.Identifier(database), sql.Identifier(role)
                    )
                )
            return
        if row[0] == role:
            return
        conn.execute(
            sql.SQL("ALTER DATABASE {} OWNER TO {}").format(
                sql.Identifier(database), sql.Identifier(role)
            )
        )
    _objects_hand_over(host, port, superuser, role, database)


def _role_create(conn: psycopg.Connection, role: str) -> bool:
    if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role]).fetchone():
        return False
    try:
        conn.execute(
            sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEROLE NOREPLICATION CREATEDB").format(
                sql.Identifier(role)
            )
        )
    except errors.DuplicateObject:
        return False
    return True


def _vector_in_template(host: str, port: int, superuser: str) -> None:
    with psycopg.connect(
        host=host, port=port, user=superuser, dbname="template1", autocommit=True
    ) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")


def _objects_hand_over(host: str, port: int, superuser: str, role: str, database: str) -> None:
    """Give the app role the tables a data folder from before the role holds."""
    with (
        psycopg.connect(
            host=host, port=port, user=superuser, dbname=database, autocommit=True
        ) as conn,
        conn.transaction(),
    ):
        owner = sql.Identifier(role)
        for name, kind in conn.execute(_FOREIGN_RELATIONS, {"role": role}).fetchall():
            conn.execute(
                sql.SQL("ALTER {} {} OWNER TO {}").format(
                    sql.SQL(_KINDS[kind]), sql.Identifier(name), owner
                )
            )
        for (signature,) in conn.execute(_FOREIGN_FUNCTIONS, {"role": role}).fetchall():
            conn.execute(sql.SQL("ALTER FUNCTION {} OWNER TO {}").format(sql.SQL(signature), owner))
