// The schema table and the details section of a table or view page.
import type { ReactNode } from "react";
import type { Column, Schema } from "../../../api";
import { DataGrid } from "../../../components/grid/DataGrid";
import { KeyValues } from "../common";
import type { TableInfo } from "./parts";

function kindDetails(column: Column): ReactNode {
  if (column.kind === "computed") return <code>{column.expression ?? ""}</code>;
  if (column.kind === "metadata")
    return (
      <>
        <code>{column.metadata_key ?? column.name}</code>
        {column.virtual ? <span className="badge"> virtual</span> : null}
      </>
    );
  return null;
}

export function SchemaTable({ schema }: { schema: Schema }) {
  const pk = new Set((schema.primary_key?.columns ?? []).map((c) => c.toLowerCase()));
  if (schema.columns.length === 0) return <p className="muted">No columns.</p>;
  return (
    <DataGrid
      rows={schema.columns}
      className="cat-schema"
      testId="schema"
      rowKey={(column) => column.name}
      rowAttributes={(column) => ({ "data-testid": `column-${column.name}` })}
      columns={[
        { header: "Column", className: "mono", cell: (column) => column.name },
        { header: "Kind", cell: (column) => column.kind },
        { header: "Type", className: "mono", testId: "column-type", cell: (column) => column.data_type ?? "" },
        {
          header: "Nullable",
          cell: (column) =>
            (column.nullable ?? !(column.data_type ?? "").toUpperCase().includes("NOT NULL")) ? "yes" : "NOT NULL",
        },
        { header: "Expression / metadata", cell: kindDetails },
        { header: "Comment", testId: "column-comment", cell: (column) => column.comment ?? "" },
        {
          header: "Key",
          cell: (column) =>
            pk.has(column.name.toLowerCase()) ? (
              <span className="badge info" title="Primary key">
                PK
              </span>
            ) : null,
        },
      ]}
    />
  );
}

export function Details({ table, schema }: { table: TableInfo; schema: Schema }) {
  return (
    <div className="cat-details">
      <h3>Watermark</h3>
      {schema.watermarks.length === 0 ? (
        <p className="muted">No watermark.</p>
      ) : (
        <ul className="cat-list">
          {schema.watermarks.map((w) => (
            <li key={w.column}>
              <code>{w.column}</code> AS <code>{w.expression}</code>
            </li>
          ))}
        </ul>
      )}
      <h3>Primary key</h3>
      {schema.primary_key ? (
        <p>
          <code>{schema.primary_key.name ?? "(unnamed)"}</code> ({schema.primary_key.columns.join(", ")}) NOT ENFORCED
        </p>
      ) : (
        <p className="muted">No primary key.</p>
      )}
      <h3>Options</h3>
      <KeyValues values={table.options ?? {}} empty="No options." />
      <h3>Partitioning</h3>
      {table.partition_by && table.partition_by.length > 0 ? (
        <p className="mono">{table.partition_by.join(", ")}</p>
      ) : (
        <p className="muted">Not partitioned.</p>
      )}
      {table.location ? (
        <>
          <h3>Location</h3>
          <p className="mono">{table.location}</p>
        </>
      ) : null}
    </div>
  );
}
