"""The audit trail is append-only in the database too (ADR 0011 §5), not only in Python.

PostgreSQL: a ``BEFORE UPDATE OR DELETE`` row trigger raises for every UPDATE, and for every
DELETE unless the transaction set ``tessera.audit_expiry`` to ``on`` (``SET LOCAL``, done by
``audit.services.expire`` alone). ``TRUNCATE`` fires no row trigger, so the test database's
flush (``TRUNCATE … CASCADE`` between transactional tests) still empties the table.

SQLite (the embedded default) has no session settings: a ``BEFORE UPDATE`` trigger only;
deletions there are the expiry's.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

POSTGRESQL_UP = """
CREATE OR REPLACE FUNCTION audit_auditevent_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE'
       AND COALESCE(current_setting('tessera.audit_expiry', true), '') = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit events are append-only: % of audit_auditevent is refused', TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'Only the expiry of access events (audit.services.expire) deletes rows.';
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS audit_auditevent_append_only ON audit_auditevent;
CREATE TRIGGER audit_auditevent_append_only
    BEFORE UPDATE OR DELETE ON audit_auditevent
    FOR EACH ROW EXECUTE FUNCTION audit_auditevent_append_only();
"""
POSTGRESQL_DOWN = """
DROP TRIGGER IF EXISTS audit_auditevent_append_only ON audit_auditevent;
DROP FUNCTION IF EXISTS audit_auditevent_append_only();
"""
SQLITE_UP = """
CREATE TRIGGER IF NOT EXISTS audit_auditevent_append_only
BEFORE UPDATE ON audit_auditevent
BEGIN
    SELECT RAISE(ABORT, 'audit events are append-only: UPDATE of audit_auditevent is refused');
END;
"""
SQLITE_DOWN = "DROP TRIGGER IF EXISTS audit_auditevent_append_only;"


def _run(schema_editor: Any, by_vendor: dict[str, str]) -> None:
    sql = by_vendor.get(schema_editor.connection.vendor)
    if sql:
        schema_editor.execute(sql, params=None)


def forwards(apps: Any, schema_editor: Any) -> None:
    _run(schema_editor, {"postgresql": POSTGRESQL_UP, "sqlite": SQLITE_UP})


def backwards(apps: Any, schema_editor: Any) -> None:
    _run(schema_editor, {"postgresql": POSTGRESQL_DOWN, "sqlite": SQLITE_DOWN})


class Migration(migrations.Migration):
    dependencies = [("audit", "0001_initial")]
    operations = [migrations.RunPython(forwards, backwards)]
