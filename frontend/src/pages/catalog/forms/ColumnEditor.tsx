// One row of the table form's column list, and the column checkboxes (primary key,
// partitioning).
import { FieldError, invalid } from "./shared";
import { METADATA_KEYS, type ColumnRow, type RowKind } from "../tableForm";

export function ColumnEditor({
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
      <td>
        <input
          aria-label={`Column ${n} comment`}
          value={row.comment}
          onChange={(ev) => set({ comment: ev.target.value })}
          {...invalid(id("comment"), err("comment"))}
        />
        <FieldError id={id("comment")} message={err("comment")} />
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
export function ColumnChecks({
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

