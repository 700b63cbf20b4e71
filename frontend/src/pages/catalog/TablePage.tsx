// The page of one table: header (status, managed/external), comment, schema, details,
// properties, statistics, history (managed tables), DDL, sample data and permissions; polled
// while the table is staged. Sample data, statistics and Query need SELECT; Analyze needs
// MODIFY; Edit and Drop need MANAGE (`can`).
import { useEffect, useRef, useState } from "react";
import { sqlPath, type Schema } from "../../api";
import { formatTimestamp } from "../../components/jobs/time";
import { useTitle } from "../../router";
import { DropDialog, EditableComment, ErrorAlert, ReadOnlyNote, StatusBadge, canOf, useRefreshCatalog } from "./common";
import { HistoryPanel } from "./object/HistoryPanel";
import { DdlPanel, PropertiesPanel, SamplePanel } from "./object/panels";
import { SchemaEditor } from "./object/SchemaEditor";
import { StatisticsPanel } from "./object/StatisticsPanel";
import { PermissionsPanel } from "./object/PermissionsPanel";
import {
  Header,
  NoSelectNote,
  NotLoaded,
  Tabs,
  ownerOf,
  queryInEditor,
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
  const [dropping, setDropping] = useState(false);
  const [editing, setEditing] = useState(false);
  const refresh = useRefreshCatalog();
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
  const owner = ownerOf(table);

  return (
    <div className="cat-main-inner">
      <Header
        parts={parts}
        kind="table"
        actions={
          <>
            {can.select ? (
              <button type="button" onClick={() => queryInEditor(path, name)} disabled={staged}>
                Query
              </button>
            ) : null}
            {can.drop ? (
              <button type="button" className="danger" onClick={() => setDropping(true)}>
                Drop table
              </button>
            ) : null}
          </>
        }
      >
        <span data-testid="table-status">
          <StatusBadge table={table} />
        </span>
        <span className="badge">{table.managed ? "managed" : "external"}</span>
      </Header>
      {info.error ? <ErrorAlert error={info.error} /> : null}
      <ReadOnlyNote can={can} what="table" owner={owner} />
      {!can.select && !staged ? <NoSelectNote what="table" /> : null}
      <EditableComment value={table.comment} editable={can.modify} onSave={(comment) => save({ comment })} />
      <dl className="cat-facts">
        <dt>Owner</dt>
        <dd data-testid="owner">{owner ?? "—"}</dd>
        <dt>Created</dt>
        <dd>{formatTimestamp(table.created_at)}</dd>
        <dt>Updated</dt>
        <dd>{formatTimestamp(table.updated_at)}</dd>
        <dt>Format</dt>
        <dd>{table.options?.format ?? table.options?.connector ?? "parquet"}</dd>
      </dl>
      <Tabs key={staged ? "staged" : "active"} tabs={tabs} />
      {dropping ? (
        <DropDialog
          what={`table ${parts.join(".")}`}
          name={name}
          typeToConfirm={false}
          onClose={() => setDropping(false)}
          onConfirm={drop}
        >
          <p>
            {table.managed
              ? "The table is managed: its data in the warehouse is deleted with it."
              : "The table is external: only the catalog entry goes; its files stay where they are."}
          </p>
        </DropDialog>
      ) : null}
    </div>
  );
}

