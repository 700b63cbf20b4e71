// Create a table: name, columns (physical, computed, metadata), primary key, partitioning,
// watermarks, options. Validation errors are shown next to the field they name.
import { useState } from "react";
import { ApiError, enc, post, type Database, type Table } from "../../../api";
import { DataGrid } from "../../../components/grid/DataGrid";
import { useWrite } from "../../../data/queries";
import { pathOf } from "../../../router";
import { ErrorAlert, useCatalogQuery } from "../common";
import { ColumnChecks, ColumnEditor } from "./ColumnEditor";
import { FieldError, FormShell, invalid, useCreateSubmit } from "./shared";
import {
  FORMATS,
  columnNames,
  emptyColumn,
  emptyForm,
  errorTarget,
  moveRow,
  needsAnalyzer,
  newId,
  targetKey,
  toTableRequest,
  type ColumnRow,
  type TableForm,
} from "../tableForm";

export function NewTableForm({ catalog, database }: { catalog: string; database: string }) {
  const [form, setForm] = useState<TableForm>(emptyForm);
  const db = useCatalogQuery<Database>(`/catalogs/${enc(catalog)}/databases/${enc(database)}`);
  const create = useWrite(
    (body: unknown) => post<Table>(`/catalogs/${enc(catalog)}/databases/${enc(database)}/tables`, body),
    ["catalogs"],
  ).mutateAsync;

  const update = (patch: Partial<TableForm>) => setForm((f) => ({ ...f, ...patch }));
  const setColumns = (columns: ColumnRow[]) => update({ columns });
  const names = columnNames(form);
  // Selections follow renames/removals: keep only names that still exist.
  const keep = (list: string[]) => list.filter((name) => names.includes(name));

  const { busy, error, submit } = useCreateSubmit(
    async () => {
      const clean = { ...form, pkColumns: keep(form.pkColumns), partitionBy: keep(form.partitionBy) };
      const created = await create(toTableRequest(clean));
      return pathOf("catalog", created.catalog, created.database, "table", created.name);
    },
    // Placed by the form as it was sent: a later edit does not move the message.
    (failure): { errors: Record<string, string>; general: unknown } => {
      if (!(failure instanceof ApiError)) return { errors: {}, general: failure };
      const target = errorTarget(failure.field, form);
      if (target.area === "general") return { errors: {}, general: failure };
      return { errors: { [targetKey(target)]: failure.message, summary: failure.message }, general: null };
    },
  );
  const errors = error?.errors ?? {};
  const general = error?.general ?? null;

  const optionError = (key: string) => errors[`options:${key}`];
  const knownOptionKeys = ["", "format", "connector", "path"];
  const extraOptionError = Object.entries(errors).find(
    ([key]) => key.startsWith("options:") && !knownOptionKeys.includes(key.slice(8)) && !form.options.some((o) => o.key.trim() === key.slice(8)),
  );

  return (
    <FormShell
      title={`New table in ${catalog}.${database}`}
      crumbs={[catalog, database]}
      onSubmit={() => void submit()}
      busy={busy}
      submitLabel="Create table"
      busyLabel={needsAnalyzer(form) ? "Checking with Spark…" : "Creating…"}
      cancelTo={pathOf("catalog", catalog, database)}
    >
      {db.error ? <ErrorAlert error={db.error} /> : null}
      <div className="cat-form-row">
        <label>
          Table name
          <input
            value={form.name}
            onChange={(ev) => update({ name: ev.target.value })}
            autoFocus
            spellCheck={false}
            {...invalid("err-name", errors["name"])}
          />
        </label>
        <FieldError id="err-name" message={errors["name"]} />
      </div>
      <label>
        Comment
        <textarea value={form.comment} rows={2} onChange={(ev) => update({ comment: ev.target.value })} />
      </label>
      <FieldError id="err-comment" message={errors["comment"]} />

      <h2>Columns</h2>
      <DataGrid
        showEmpty
        rows={form.columns}
        className="cat-columns"
        columns={[
          { header: "#" },
          { header: "Kind" },
          { header: "Name" },
          { header: "Type / expression" },
          { header: "Constraints / metadata" },
          { header: "Comment" },
          { header: "Actions", hideHeader: true },
        ]}
        renderRow={(row, index) => (
          <ColumnEditor
            key={row.id}
            row={row}
            index={index}
            count={form.columns.length}
            errors={errors}
            onChange={(next) => setColumns(form.columns.map((r) => (r.id === row.id ? next : r)))}
            onMove={(delta) => setColumns(moveRow(form.columns, index, delta))}
            onRemove={() => setColumns(form.columns.filter((r) => r.id !== row.id))}
          />
        )}
      />
      <FieldError id="err-columns" message={errors["columns"]} />
      <p className="muted" data-testid="analyzer-note">
        Computed columns and the watermark are typed by Spark&apos;s analyzer on a worker before the
        table is created: an expression Spark refuses is shown at its field, and nothing is stored.
      </p>
      <div className="toolbar">
        <button type="button" className="small" onClick={() => setColumns([...form.columns, emptyColumn()])}>
          + Physical column
        </button>
        <button type="button" className="small" onClick={() => setColumns([...form.columns, emptyColumn("computed")])}>
          + Computed column
        </button>
        <button type="button" className="small" onClick={() => setColumns([...form.columns, emptyColumn("metadata")])}>
          + Metadata column
        </button>
      </div>

      <h2>Watermark</h2>
      <div className="cat-form-grid">
        <label>
          Watermark column
          <select
            value={form.watermarkColumn}
            onChange={(ev) => update({ watermarkColumn: ev.target.value })}
            {...invalid("err-wm-column", errors["watermark:column"])}
          >
            <option value="">(none)</option>
            {names.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
          <FieldError id="err-wm-column" message={errors["watermark:column"]} />
        </label>
        <label>
          Watermark expression
          <input
            className="mono"
            placeholder="ts - INTERVAL 5 SECONDS"
            value={form.watermarkExpression}
            disabled={!form.watermarkColumn}
            onChange={(ev) => update({ watermarkExpression: ev.target.value })}
            {...invalid("err-wm-expr", errors["watermark:expression"])}
          />
          <FieldError id="err-wm-expr" message={errors["watermark:expression"]} />
        </label>
      </div>

      <h2>Primary key</h2>
      <div className="cat-form-grid">
        <label>
          Primary key name
          <input
            placeholder="optional, e.g. pk_orders"
            value={form.pkName}
            onChange={(ev) => update({ pkName: ev.target.value })}
            {...invalid("err-pk-name", errors["primary_key:name"])}
          />
          <FieldError id="err-pk-name" message={errors["primary_key:name"]} />
        </label>
        <ColumnChecks
          legend="Primary key columns (NOT ENFORCED)"
          names={names}
          checked={keep(form.pkColumns)}
          onChange={(pkColumns) => update({ pkColumns })}
          error={errors["primary_key:columns"]}
          errorId="err-pk-columns"
        />
      </div>

      <h2>Storage and options</h2>
      <fieldset className="cat-radios">
        <legend>Storage</legend>
        <label className="inline">
          <input type="radio" name="storage" checked={form.storage === "managed"} onChange={() => update({ storage: "managed" })} />
          Managed (data in the warehouse)
        </label>
        <label className="inline">
          <input type="radio" name="storage" checked={form.storage === "external"} onChange={() => update({ storage: "external" })} />
          External (files at a path)
        </label>
      </fieldset>
      <div className="cat-form-grid">
        {form.storage === "managed" ? (
          <label>
            Format
            <select value={form.format} onChange={(ev) => update({ format: ev.target.value })} {...invalid("err-format", optionError("format"))}>
              {FORMATS.map((f) => (
                <option key={f} value={f}>
                  {f}
                </option>
              ))}
            </select>
            <FieldError id="err-format" message={optionError("format")} />
          </label>
        ) : (
          <>
            <label>
              Connector
              <select
                value={form.connector}
                onChange={(ev) => update({ connector: ev.target.value })}
                {...invalid("err-connector", optionError("connector"))}
              >
                {FORMATS.map((f) => (
                  <option key={f} value={f}>
                    {f}
                  </option>
                ))}
              </select>
              <FieldError id="err-connector" message={optionError("connector")} />
            </label>
            <label>
              Path
              <input
                className="mono"
                value={form.path}
                placeholder="/data/external/orders"
                onChange={(ev) => update({ path: ev.target.value })}
                {...invalid("err-path", optionError("path"))}
              />
              <FieldError id="err-path" message={optionError("path")} />
            </label>
          </>
        )}
      </div>
      <h3>More options</h3>
      {form.options.length === 0 ? <p className="muted">No other options.</p> : null}
      {form.options.map((option, index) => {
        const message = option.key.trim() ? optionError(option.key.trim()) : undefined;
        const set = (patch: Partial<typeof option>) =>
          update({ options: form.options.map((o) => (o.id === option.id ? { ...o, ...patch } : o)) });
        return (
          <div className="cat-option" key={option.id}>
            <input
              aria-label={`Option ${index + 1} key`}
              className="mono"
              value={option.key}
              onChange={(ev) => set({ key: ev.target.value })}
              {...invalid(`err-opt-${option.id}`, message)}
            />
            <input
              aria-label={`Option ${index + 1} value`}
              className="mono"
              value={option.value}
              onChange={(ev) => set({ value: ev.target.value })}
            />
            <button
              type="button"
              className="small danger"
              aria-label={`Remove option ${index + 1}`}
              onClick={() => update({ options: form.options.filter((o) => o.id !== option.id) })}
            >
              ✕
            </button>
            <FieldError id={`err-opt-${option.id}`} message={message} />
          </div>
        );
      })}
      <FieldError id="err-options" message={errors["options:"] ?? extraOptionError?.[1]} />
      <div className="toolbar">
        <button type="button" className="small" onClick={() => update({ options: [...form.options, { id: newId(), key: "", value: "" }] })}>
          + Option
        </button>
      </div>

      <h2>Partitioning</h2>
      <ColumnChecks
        legend="Partition columns"
        names={names}
        checked={keep(form.partitionBy)}
        onChange={(partitionBy) => update({ partitionBy })}
        error={errors["partition_by"]}
        errorId="err-partition"
      />

      <ErrorAlert error={general} />
      {errors["summary"] ? (
        <p className="error" data-testid="form-error-summary">
          The table was not created: {errors["summary"]}
        </p>
      ) : null}
    </FormShell>
  );
}

