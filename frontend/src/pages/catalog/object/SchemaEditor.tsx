// Editing a table's schema on its page: rename, retype, comment, add or remove columns, NOT
// NULL, the watermark and the primary key, with the changes previewed as ALTER TABLE statements
// and the resulting CREATE TABLE. A managed Delta table's changes are Spark's ALTER TABLE
// statements, run one by one as they are shown (deltaAlter.ts); any other table's are applied
// as one PATCH of the declared schema (the server checks it as it checks a created table's).
import { useState } from "react";
import type { Column, Schema } from "../../../api";
import { DataGrid } from "../../../components/grid/DataGrid";
import { ErrorAlert } from "../common";
import { deltaStatements, isNotNull } from "../deltaAlter";
import { alterStatements, createDdl, draftOf, newRow, schemaOf, type EditRow, type SchemaDraft } from "../schemaEdit";

/** A managed Delta table's editor runs its statements with `run` (one job each). */
export interface DeltaRunner {
  run: (sql: string) => Promise<void>;
}

export function SchemaEditor({
  path,
  schema,
  onSave,
  onClose,
  delta = null,
}: {
  path: string[];
  schema: Schema;
  onSave: (schema: Schema) => Promise<void>;
  onClose: () => void;
  delta?: DeltaRunner | null;
}) {
  // The schema the changes start from, kept while the page reloads the table under it (a
  // Delta change applied before a failed one must not turn the preview into other changes).
  const [before] = useState<Schema>(schema);
  const [draft, setDraft] = useState<SchemaDraft>(() => draftOf(schema));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // Statements applied before one failed: the draft no longer starts from the table.
  const [partial, setPartial] = useState<{ applied: number; of: number } | null>(null);
  const deltaChanges = delta ? deltaStatements(path, before, draft) : null;
  const statements = deltaChanges ? deltaChanges.statements : alterStatements(path, before, draft);
  const refusals = deltaChanges?.refusals ?? [];
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
  // NOT NULL may be in the type text too (`BIGINT NOT NULL`): clearing it clears both.
  const setNotNull = (row: EditRow, on: boolean) =>
    setRow(row.key, {
      nullable: !on,
      data_type: on ? row.column.data_type : (row.column.data_type ?? "").replace(/\s+NOT\s+NULL\s*$/i, ""),
    });

  const runDelta = async (runner: DeltaRunner) => {
    let applied = 0;
    try {
      for (const sql of statements) {
        await runner.run(sql);
        applied += 1;
      }
      onClose();
    } catch (err) {
      setError(err);
      if (applied > 0) setPartial({ applied, of: statements.length });
      setBusy(false);
    }
  };

  const save = async () => {
    setBusy(true);
    setError(null);
    if (delta) return runDelta(delta);
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
            header: "Not null",
            cell: (row, index) =>
              row.column.kind === "physical" ? (
                <label className="inline">
                  <input
                    type="checkbox"
                    checked={isNotNull(row.column)}
                    onChange={(ev) => setNotNull(row, ev.target.checked)}
                  />
                  <span className="sr-only">Column {index + 1} NOT NULL</span>
                </label>
              ) : null,
          },
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
      {delta ? (
        <p className="muted">
          A managed Delta table changes through Delta&apos;s ALTER TABLE: these statements run one after the other, as
          shown.
        </p>
      ) : null}
      {refusals.length ? (
        <ul className="cat-refusals" data-testid="schema-refusals">
          {refusals.map((text) => (
            <li key={text}>{text}</li>
          ))}
        </ul>
      ) : statements.length === 0 ? (
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
      {partial ? (
        <p className="cat-refusals" data-testid="schema-partial">
          {partial.applied} of {partial.of} statements ran before this one failed and stay applied. Cancel and edit the
          schema again from the table as it is now.
        </p>
      ) : null}
      <div className="toolbar">
        <button
          type="button"
          className="primary"
          onClick={() => void save()}
          disabled={busy || statements.length === 0 || partial !== null}
        >
          {busy ? "Saving…" : "Apply changes"}
        </button>
        <button type="button" onClick={onClose} disabled={busy}>
          Cancel
        </button>
      </div>
    </div>
  );
}
