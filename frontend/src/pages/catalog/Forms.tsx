// Create forms: catalog, database, table. Validation errors of the API are shown next to
// the field `details.field` names; the form keeps what was typed.
import { useState, type FormEvent, type ReactNode } from "react";
import { ApiError, enc, get, post, type Catalog, type Database, type Table } from "../../api";
import { navigate, pathOf, useTitle } from "../../router";
import { Breadcrumbs, ErrorAlert, errorMessage, refreshTree, useLoad } from "./common";
import {
  FORMATS,
  METADATA_KEYS,
  columnNames,
  emptyColumn,
  emptyForm,
  errorTarget,
  moveRow,
  newId,
  targetKey,
  toTableRequest,
  type ColumnRow,
  type RowKind,
  type TableForm,
} from "./tableForm";


function FieldError({ id, message }: { id: string; message: string | undefined }) {
  if (!message) return null;
  return (
    <div className="field-error" id={id} role="alert">
      {message}
    </div>
  );
}

/** Props that mark an input invalid and point at its error text. */
function invalid(id: string, message: string | undefined) {
  return message ? { "aria-invalid": true as const, "aria-describedby": id } : {};
}

function FormShell({
  title,
  crumbs,
  children,
  onSubmit,
  busy,
  submitLabel,
  cancelTo,
}: {
  title: string;
  crumbs: string[];
  children: ReactNode;
  onSubmit: () => void;
  busy: boolean;
  submitLabel: string;
  cancelTo: string;
}) {
  useTitle(title);
  return (
    <div className="cat-main-inner">
      <Breadcrumbs parts={crumbs} />
      <h1>{title}</h1>
      <form
        className="cat-form"
        noValidate
        onSubmit={(event: FormEvent) => {
          event.preventDefault();
          onSubmit();
        }}
      >
        {children}
        <div className="toolbar cat-form-actions">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? "Creating…" : submitLabel}
          </button>
          <button type="button" onClick={() => navigate(cancelTo)} disabled={busy}>
            Cancel
          </button>
        </div>
      </form>
    </div>
  );
}

/** After a failed submit: bring the first field marked invalid (or the alert) into view. */
function focusFirstInvalid() {
  window.setTimeout(() => {
    const field = document.querySelector<HTMLElement>('.cat-form [aria-invalid="true"]');
    const target = field ?? document.querySelector<HTMLElement>('.cat-form [role="alert"]');
    target?.scrollIntoView({ block: "center" });
    field?.focus({ preventScroll: true });
  }, 0);
}

/** Split an API error into a per-field message (for simple forms) or a general one. */
function splitError(error: unknown, fields: string[]): { field?: string; general?: unknown } {
  if (error instanceof ApiError && error.field && fields.includes(error.field)) return { field: error.field };
  return error ? { general: error } : {};
}

export function NewCatalogForm() {
  const [name, setName] = useState("");
  const [comment, setComment] = useState("");
  const [defaultDatabase, setDefaultDatabase] = useState("default");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const split = splitError(error, ["name", "comment", "default_database"]);
  const msg = (field: string) => (split.field === field ? errorMessage(error) : undefined);

  const submit = async () => {
    setBusy(true);
    setError(null);
    try {
      const created = await post<Catalog>("/catalogs", {
        name: name.trim(),
        comment,
        default_database: defaultDatabase.trim() || "default",
      });
      refreshTree();
      navigate(pathOf("catalog", created.name));
    } catch (err) {
      setError(err);
      setBusy(false);
      focusFirstInvalid();
    }
  };

  return (
    <FormShell
      title="New catalog"
      crumbs={[]}
      onSubmit={() => void submit()}
      busy={busy}
      submitLabel="Create catalog"
      cancelTo="/catalog"
    >
      <label>
        Name
        <input value={name} onChange={(ev) => setName(ev.target.value)} autoFocus {...invalid("err-name", msg("name"))} />
      </label>
      <FieldError id="err-name" message={msg("name")} />
      <label>
        Comment
        <textarea value={comment} rows={2} onChange={(ev) => setComment(ev.target.value)} {...invalid("err-comment", msg("comment"))} />
      </label>
      <FieldError id="err-comment" message={msg("comment")} />
      <label>
        Default database
        <input
          value={defaultDatabase}
          onChange={(ev) => setDefaultDatabase(ev.target.value)}
          {...invalid("err-default", msg("default_database"))}
        />
      </label>
      <FieldError id="err-default" message={msg("default_database")} />
      <ErrorAlert error={split.general} />
    </FormShell>
  );
}

export function NewDatabaseForm({ catalog }: { catalog: string }) {
  const [name, setName] = useState("");
  const [comment, setComment] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const split = splitError(error, ["name", "comment"]);
  const msg = (field: string) => (split.field === field ? errorMessage(error) : undefined);

  const submit = async () => {
    setBusy(true);
    setError(null);
    try {
      const created = await post<Database>(`/catalogs/${enc(catalog)}/databases`, { name: name.trim(), comment });
      refreshTree();
      navigate(pathOf("catalog", created.catalog, created.name));
    } catch (err) {
      setError(err);
      setBusy(false);
      focusFirstInvalid();
    }
  };

  return (
    <FormShell
      title={`New database in ${catalog}`}
      crumbs={[catalog]}
      onSubmit={() => void submit()}
      busy={busy}
      submitLabel="Create database"
      cancelTo={pathOf("catalog", catalog)}
    >
      <label>
        Name
        <input value={name} onChange={(ev) => setName(ev.target.value)} autoFocus {...invalid("err-name", msg("name"))} />
      </label>
      <FieldError id="err-name" message={msg("name")} />
      <label>
        Comment
        <textarea value={comment} rows={2} onChange={(ev) => setComment(ev.target.value)} />
      </label>
      <FieldError id="err-comment" message={msg("comment")} />
      <ErrorAlert error={split.general} />
    </FormShell>
  );
}

// --- table ------------------------------------------------------------------------------------

function ColumnEditor({
  row,
  index,
  count,
  errors,
  onChange,
  onMove,
  onRemove,
}: {
  row: ColumnRow;
  index: number;
  count: number;
  errors: Record<string, string>;
  onChange: (row: ColumnRow) => void;
  onMove: (delta: -1 | 1) => void;
  onRemove: () => void;
}) {
  const n = index + 1;
  const err = (field: string) => errors[`column:${row.id}:${field}`];
  const id = (field: string) => `err-col-${row.id}-${field}`;
  const set = (patch: Partial<ColumnRow>) => onChange({ ...row, ...patch });
  return (
    <tr data-testid={`column-row-${index}`} className={err("row") ? "cat-row-invalid" : undefined}>
      <td className="muted">{n}</td>
      <td>
        <select
          aria-label={`Column ${n} kind`}
          value={row.kind}
          onChange={(ev) => {
            const kind = ev.target.value as RowKind;
            set({ kind, dataType: kind === "metadata" && !row.dataType ? "STRING" : row.dataType });
          }}
        >
          <option value="physical">physical</option>
          <option value="computed">computed</option>
          <option value="metadata">metadata</option>
        </select>
        <FieldError id={id("row")} message={err("row")} />
      </td>
      <td>
        <input
          aria-label={`Column ${n} name`}
          value={row.name}
          onChange={(ev) => set({ name: ev.target.value })}
          spellCheck={false}
          {...invalid(id("name"), err("name"))}
        />
        <FieldError id={id("name")} message={err("name")} />
      </td>
      <td>
        {row.kind === "computed" ? (
          <>
            <input
              aria-label={`Column ${n} expression`}
              className="mono"
              placeholder="price * qty"
              value={row.expression}
              onChange={(ev) => set({ expression: ev.target.value })}
              spellCheck={false}
              {...invalid(id("expression"), err("expression"))}
            />
            <FieldError id={id("expression")} message={err("expression")} />
          </>
        ) : (
          <>
            <input
              aria-label={`Column ${n} data type`}
              className="mono"
              placeholder="BIGINT"
              value={row.dataType}
              onChange={(ev) => set({ dataType: ev.target.value })}
              spellCheck={false}
              {...invalid(id("data_type"), err("data_type"))}
            />
            <FieldError id={id("data_type")} message={err("data_type")} />
          </>
        )}
      </td>
      <td>
        {row.kind === "physical" ? (
          <label className="inline">
            <input type="checkbox" checked={row.notNull} onChange={(ev) => set({ notNull: ev.target.checked })} />
            NOT NULL
          </label>
        ) : null}
        {row.kind === "metadata" ? (
          <div className="cat-meta">
            <select
              aria-label={`Column ${n} metadata key`}
              value={row.metadataKey}
              onChange={(ev) => set({ metadataKey: ev.target.value })}
              {...invalid(id("metadata_key"), err("metadata_key"))}
            >
              {METADATA_KEYS.map((key) => (
                <option key={key} value={key}>
                  {key}
                </option>
              ))}
            </select>
            <label className="inline">
              <input type="checkbox" checked={row.virtual} onChange={(ev) => set({ virtual: ev.target.checked })} />
              virtual
            </label>
            <FieldError id={id("metadata_key")} message={err("metadata_key")} />
          </div>
        ) : null}
      </td>
      <td className="cat-row-actions">
        <button type="button" className="small" aria-label={`Move column ${n} up`} disabled={index === 0} onClick={() => onMove(-1)}>
          ↑
        </button>
        <button
          type="button"
          className="small"
          aria-label={`Move column ${n} down`}
          disabled={index === count - 1}
          onClick={() => onMove(1)}
        >
          ↓
        </button>
        <button type="button" className="small danger" aria-label={`Remove column ${n}`} disabled={count === 1} onClick={onRemove}>
          ✕
        </button>
      </td>
    </tr>
  );
}

function ColumnChecks({
  legend,
  names,
  checked,
  onChange,
  error,
  errorId,
}: {
  legend: string;
  names: string[];
  checked: string[];
  onChange: (next: string[]) => void;
  error?: string;
  errorId: string;
}) {
  return (
    <fieldset className="cat-checks" aria-describedby={error ? errorId : undefined}>
      <legend>{legend}</legend>
      {names.length === 0 ? <span className="muted">Name some columns first.</span> : null}
      {names.map((name) => (
        <label key={name} className="inline">
          <input
            type="checkbox"
            checked={checked.includes(name)}
            onChange={(ev) =>
              onChange(ev.target.checked ? [...checked, name] : checked.filter((c) => c !== name))
            }
          />
          <span className="mono">{name}</span>
        </label>
      ))}
      <FieldError id={errorId} message={error} />
    </fieldset>
  );
}

export function NewTableForm({ catalog, database }: { catalog: string; database: string }) {
  const [form, setForm] = useState<TableForm>(emptyForm);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [general, setGeneral] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const db = useLoad(
    (signal) => get<Database>(`/catalogs/${enc(catalog)}/databases/${enc(database)}`, { signal }),
    `${catalog}/${database}`,
  );

  const update = (patch: Partial<TableForm>) => setForm((f) => ({ ...f, ...patch }));
  const setColumns = (columns: ColumnRow[]) => update({ columns });
  const names = columnNames(form);
  // Selections follow renames/removals: keep only names that still exist.
  const keep = (list: string[]) => list.filter((name) => names.includes(name));

  const submit = async () => {
    setBusy(true);
    setErrors({});
    setGeneral(null);
    const clean = { ...form, pkColumns: keep(form.pkColumns), partitionBy: keep(form.partitionBy) };
    try {
      const created = await post<Table>(
        `/catalogs/${enc(catalog)}/databases/${enc(database)}/tables`,
        toTableRequest(clean),
      );
      refreshTree();
      navigate(pathOf("catalog", created.catalog, created.database, "table", created.name));
    } catch (err) {
      setBusy(false);
      if (err instanceof ApiError) {
        const target = errorTarget(err.field, form);
        if (target.area === "general") setGeneral(err);
        else setErrors({ [targetKey(target)]: err.message, summary: err.message });
      } else setGeneral(err);
      focusFirstInvalid();
    }
  };

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
      <table className="grid cat-columns">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Kind</th>
            <th scope="col">Name</th>
            <th scope="col">Type / expression</th>
            <th scope="col">Constraints / metadata</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {form.columns.map((row, index) => (
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
          ))}
        </tbody>
      </table>
      <FieldError id="err-columns" message={errors["columns"]} />
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
