// The page of one table: header (status, managed/external), comment, schema, details,
// properties, statistics, history (managed tables), DDL, sample data and permissions; polled
// while the table is staged. Sample data, statistics and Query need SELECT; Analyze needs
// MODIFY; Edit and Drop need MANAGE (`can`). A managed Delta table's schema and comment change
// by the SQL statements the editor shows (ALTER TABLE, COMMENT ON TABLE), run as jobs.
import { useEffect, useRef, useState } from "react";
import { sqlPath, type Schema } from "../../api";
import { formatTimestamp } from "../../format";
import { useTitle } from "../../router";
import { ErrorAlert, StatusBadge, canOf, useRefreshCatalog } from "./common";
import { isManagedDelta, tableCommentStatement } from "./deltaAlter";
import { useRunDdl } from "./forms/runDdl";
import { HistoryPanel } from "./object/HistoryPanel";
import { DdlPanel, PropertiesPanel, SamplePanel } from "./object/panels";
import { SchemaEditor } from "./object/SchemaEditor";
import { StatisticsPanel } from "./object/StatisticsPanel";
import { PermissionsPanel } from "./object/PermissionsPanel";
import { ObjectPage } from "./object/ObjectPage";
import {
  NotLoaded,
  ownerOf,
  useObject,
  type ObjectProps,
  type TabSpec,
  type TableInfo,
} from "./object/parts";
import { Details, SchemaTable } from "./object/SchemaTable";

const isStaged = (table: TableInfo) => table.status === "staged";

export function TablePage({ catalog, database, name }: ObjectProps) {
  const parts = [catalog, database, name];
  const path = sqlPath(parts);
  useTitle(parts.join("."));
  // A staged table (being created by a job) is polled until it is active.
  const { base, info, save, drop } = useObject<TableInfo>({ catalog, database, name }, "tables", isStaged);
  const [editing, setEditing] = useState(false);
  const refresh = useRefreshCatalog();
  const runSql = useRunDdl();
  const staged = info.data ? isStaged(info.data) : false;
  const wasStaged = useRef(false);
  // Once it is active, the tree and lists that showed it staged load again.
  useEffect(() => {
    if (staged) wasStaged.current = true;
    else if (wasStaged.current && info.data) {
      wasStaged.current = false;
      refresh();
    }
  }, [staged, info.data, refresh]);

  if (!info.data) return <NotLoaded parts={parts} error={info.error} what="table" />;
  const table = info.data;
  const resolved = table.resolved_schema;
  const schema: Schema = resolved ?? table.schema;
  const can = canOf(table);
  const delta = isManagedDelta(table);

  const tabs: TabSpec[] = [
    {
      id: "schema",
      label: "Schema",
      render: () => (
        <>
          {staged ? (
            <p className="muted">The schema is known once the job creating the table has finished.</p>
          ) : null}
          {editing ? (
            <SchemaEditor
              path={parts}
              schema={table.schema}
              onSave={(declared) => save({ schema: declared })}
              delta={delta ? { run: runSql } : null}
              onClose={() => setEditing(false)}
            />
          ) : (
            <>
              <SchemaTable schema={schema} />
              {can.modify && !staged ? (
                <div className="toolbar">
                  <button type="button" className="small" onClick={() => setEditing(true)}>
                    Edit schema
                  </button>
                </div>
              ) : null}
            </>
          )}
        </>
      ),
    },
    { id: "details", label: "Details", render: () => <Details table={table} schema={schema} /> },
    { id: "properties", label: "Properties", render: () => <PropertiesPanel base={base} /> },
  ];
  if (!staged) {
    if (can.select) {
      tabs.push({
        id: "statistics",
        label: "Statistics",
        render: () => <StatisticsPanel base={base} sqlPath={path} canAnalyze={can.write} />,
      });
    }
    if (table.managed) {
      tabs.push({ id: "history", label: "History", render: () => <HistoryPanel base={base} path={path} /> });
    }
    tabs.push({ id: "ddl", label: "DDL", render: () => <DdlPanel path={path} /> });
    if (can.select) {
      tabs.push({ id: "sample", label: "Sample data", render: () => <SamplePanel path={path} title={name} /> });
    }
  }
  tabs.push({ id: "permissions", label: "Permissions", render: () => <PermissionsPanel base={base} kind="table" /> });
  return (
    <ObjectPage
      parts={parts}
      kind="table"
      can={can}
      owner={ownerOf(table)}
      comment={table.comment}
      onSaveComment={(comment) => (delta ? runSql(tableCommentStatement(parts, comment)) : save({ comment }))}
      onDrop={drop}
      dropText={
        table.managed
          ? "The table is managed: its data in the warehouse is deleted with it."
          : "The table is external: only the catalog entry goes; its files stay where they are."
      }
      badges={
        <>
          <span data-testid="table-status">
            <StatusBadge table={table} />
          </span>
          <span className="badge">{table.managed ? "managed" : "external"}</span>
        </>
      }
      queryPath={path}
      queryDisabled={staged}
      alert={info.error ? <ErrorAlert error={info.error} /> : null}
      noSelectNote={!can.select && !staged}
      facts={[
        { label: "Owner", value: ownerOf(table) ?? "—", testId: "owner" },
        { label: "Created", value: formatTimestamp(table.created_at) },
        { label: "Updated", value: formatTimestamp(table.updated_at) },
        { label: "Format", value: table.options?.format ?? table.options?.connector ?? "parquet" },
      ]}
      tabs={tabs}
      tabsKey={staged ? "staged" : "active"}
    />
  );
}
