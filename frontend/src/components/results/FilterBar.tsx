// The filters of the result (all must hold), as removable chips, and the form adding one.
import { useState, type FormEvent } from "react";
import type { ResultColumn } from "../../api";
import { FILTER_OPS, filterLabel, isNestedType, type FilterOp, type FilterSpec } from "./table";

export function FilterBar({
  columns,
  filters,
  editing,
  onAdd,
  onRemove,
  onEdit,
}: {
  columns: ResultColumn[];
  filters: FilterSpec[];
  /** The column of the open form (-1: the first), or null when closed. */
  editing: number | null;
  onAdd(filter: FilterSpec): void;
  onRemove(index: number): void;
  onEdit(column: number | null): void;
}) {
  if (filters.length === 0 && editing === null) return null;
  return (
    <div className="toolbar rv-filters" role="group" aria-label="Filters">
      {filters.map((f, i) => (
        <span key={i} className="rv-chip" data-testid="filter-chip">
          {filterLabel(f, columns)}
          <button
            type="button"
            className="rv-chip-x"
            aria-label={`Remove filter ${filterLabel(f, columns)}`}
            onClick={() => onRemove(i)}
          >
            ×
          </button>
        </span>
      ))}
      {editing !== null && (
        <FilterForm
          key={editing}
          columns={columns}
          column={editing < 0 ? 0 : editing}
          onAdd={(f) => {
            onAdd(f);
            onEdit(null);
          }}
          onCancel={() => onEdit(null)}
        />
      )}
    </div>
  );
}

function FilterForm({
  columns,
  column: initial,
  onAdd,
  onCancel,
}: {
  columns: ResultColumn[];
  column: number;
  onAdd(filter: FilterSpec): void;
  onCancel(): void;
}) {
  const [column, setColumn] = useState(initial);
  const nested = isNestedType(columns[column]?.data_type ?? "");
  const [op, setOp] = useState<FilterOp>(nested ? "not_null" : "contains");
  const [value, setValue] = useState("");
  const ops = FILTER_OPS.filter((o) => !nested || !o.needsValue);
  const needsValue = FILTER_OPS.find((o) => o.op === op)?.needsValue ?? false;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onAdd({ column, op, value: needsValue ? value : "" });
  };
  return (
    <form className="rv-filter-form" onSubmit={submit} aria-label="Add a filter">
      <select
        aria-label="Filter column"
        value={column}
        onChange={(e) => {
          const next = Number(e.target.value);
          setColumn(next);
          if (isNestedType(columns[next]?.data_type ?? "")) setOp("not_null");
        }}
      >
        {columns.map((c, i) => (
          <option key={i} value={i}>
            {c.name}
          </option>
        ))}
      </select>
      <select aria-label="Filter operator" value={op} onChange={(e) => setOp(e.target.value as FilterOp)}>
        {ops.map((o) => (
          <option key={o.op} value={o.op}>
            {o.label}
          </option>
        ))}
      </select>
      {needsValue && (
        <input
          aria-label="Filter value"
          value={value}
          autoFocus
          placeholder={/date|timestamp/i.test(columns[column]?.data_type ?? "") ? "2024-01-31" : "value"}
          onChange={(e) => setValue(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Escape") onCancel();
          }}
        />
      )}
      <button type="submit" className="small primary">
        Apply
      </button>
      <button type="button" className="small" onClick={onCancel}>
        Cancel
      </button>
    </form>
  );
}
