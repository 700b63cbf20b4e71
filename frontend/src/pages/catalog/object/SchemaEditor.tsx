// Editing a table's schema on its page: rename, retype, comment, add or remove columns, the
// watermark and the primary key, with the changes previewed as ALTER TABLE statements and the
// resulting CREATE TABLE; applied as one PATCH of the declared schema (the server checks it as
// it checks a created table's).
import { useState } from "react";
import type { Column, Schema } from "../../../api";
import { DataGrid } from "../../../components/grid/DataGrid";
import { ErrorAlert } from "../common";
import { alterStatements, createDdl, draftOf, newRow, schemaOf, type EditRow, type SchemaDraft } from "../schemaEdit";

export function SchemaEditor({
  path,
  schema,
  onSave,
  onClose,
}: {
  path: string[];
  schema: Schema;
  onSave: (schema: Schema) => Promise<void>;
  onClose: () => void;
}) {
  const [draft, setDraft] = useState<SchemaDraft>(() => draftOf(schema));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const statements = alterStatements(path, schema, draft);
  const setRow = (key: number, patch: Partial<Column>) =>
    setDraft((d) => ({
      ...d,
      rows: d.rows.map((r) => (r.key === key ? { ...r, column: { ...r.column, ...patch } } : r)),
    }));
  const removeRow = (key: number) =>
    setDraft((d) => ({
      ...d,
      rows: d.rows.filter((r) => r.key !== key),
      pkRows: d.pkRows.filter((k) => k !== key),
      watermark: d.watermark?.row === key ? null : d.watermark,
    }));
  const togglePk = (key: number, on: boolean) =>
    setDraft((d) => ({ ...d, pkRows: on ? [...d.pkRows, key] : d.pkRows.filter((k) => k !== key) }));

  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      await onSave(schemaOf(draft));
      onClose();
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  const typeCell = (row: EditRow, index: number) =>
    row.column.kind === "computed" ? (
      <input
        aria-label={`Column ${index + 1} expression`}
        className="mono"
        value={row.column.expression ?? ""}
        spellCheck={false}
        onChange={(ev) => setRow(row.key, { expression: ev.target.value })}
      />
    ) : (
      <input
        aria-label={`Column ${index + 1} type`}
        className="mono"
        value={row.column.data_type ?? ""}
        spellCheck={false}
        onChange={(ev) => setRow(row.key, { data_type: ev.target.value })}
      />
    );

  return (
    <div className="cat-schema-editor" data-testid="schema-editor">
      <DataGrid
        showEmpty
        rows={draft.rows}
        className="cat-columns"
        rowKey={(row) => String(row.key)}
        columns={[
          {
            header: "Column",
            cell: (row, index) => (
              <input
                aria-label={`Column ${index + 1} name`}
                className="mono"
                value={row.column.name}
                spellCheck={false}
                onChange={(ev) => setRow(row.key, { name: ev.target.value })}
              />
            ),
          },
          { header: "Kind", cell: (row) => row.column.kind },
          { header: "Type / expression", cell: typeCell },
          {
            header: "Comment",
            cell: (row, index) => (
              <input
                aria-label={`Column ${index + 1} comment`}
                value={row.column.comment ?? ""}
                onChange={(ev) => setRow(row.key, { comment: ev.target.value })}
              />
            ),
          },
          {
            header: "Key",
            cell: (row, index) => (
              <label className="inline">
                <input
                  type="checkbox"
                  checked={draft.pkRows.includes(row.key)}
                  disabled={row.column.kind !== "physical"}
                  onChange={(ev) => togglePk(row.key, ev.target.checked)}
                />
                <span className="sr-only">Column {index + 1} in the primary key</span>
                PK
              </label>
            ),
          },
          {
            header: "Actions",
            hideHeader: true,
            cell: (row) => (
              <button type="button" className="small" onClick={() => removeRow(row.key)}>
                Remove
              </button>
            ),
          },
        ]}
      />
      <div className="toolbar">
        <button type="button" className="small" onClick={() => setDraft((d) => ({ ...d, rows: [...d.rows, newRow()] }))}>
          + Column
        </button>
      </div>
      <div className="cat-form-row">
        <label className="inline">
          Watermark column
          <select
            value={draft.watermark?.row ?? ""}
            onChange={(ev) =>
              setDraft((d) => ({
                ...d,
                watermark: ev.target.value ? { row: Number(ev.target.value), expression: d.watermark?.expression ?? "" } : null,
              }))
            }
          >
            <option value="">(none)</option>
            {draft.rows.map((row) => (
              <option key={row.key} value={row.key}>
                {row.column.name || "(unnamed)"}
              </option>
            ))}
          </select>
        </label>
        {draft.watermark ? (
          <label className="inline">
            Watermark expression
            <input
              className="mono"
              value={draft.watermark.expression}
              spellCheck={false}
              onChange={(ev) => setDraft((d) => ({ ...d, watermark: d.watermark && { ...d.watermark, expression: ev.target.value } }))}
            />
          </label>
        ) : null}
        <label className="inline">
          Primary key name
          <input value={draft.pkName} spellCheck={false} onChange={(ev) => setDraft((d) => ({ ...d, pkName: ev.target.value }))} />
        </label>
      </div>
      <h3>Changes</h3>
      {statements.length === 0 ? (
        <p className="muted">No changes yet.</p>
      ) : (
        <pre className="cat-ddl" data-testid="schema-changes">
          {statements.join(";\n") + ";"}
        </pre>
      )}
      <details>
        <summary>Resulting CREATE TABLE</summary>
        <pre className="cat-ddl" data-testid="schema-ddl">
          {createDdl(path, schemaOf(draft))}
        </pre>
      </details>
      <ErrorAlert error={error} />
      <div className="toolbar">
        <button type="button" className="primary" onClick={() => void save()} disabled={busy || statements.length === 0}>
          {busy ? "Saving…" : "Apply changes"}
        </button>
        <button type="button" onClick={onClose} disabled={busy}>
          Cancel
        </button>
      </div>
    </div>
  );
}
