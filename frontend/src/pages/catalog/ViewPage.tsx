// The page of one view: its query (as written and expanded), schema, details, sample data
// (with SELECT) and permissions. A view reads its tables with its owner's rights.
import { sqlPath } from "../../api";
import { formatTimestamp } from "../../format";
import { useTitle } from "../../router";
import { canOf } from "./common";
import { SamplePanel } from "./object/panels";
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
import { SchemaTable } from "./object/SchemaTable";

export function ViewPage({ catalog, database, name }: ObjectProps) {
  const parts = [catalog, database, name];
  const path = sqlPath(parts);
  useTitle(parts.join("."));
  const { base, info, save, drop } = useObject<TableInfo>({ catalog, database, name }, "views");

  if (!info.data) return <NotLoaded parts={parts} error={info.error} what="view" />;
  const view = info.data;
  const schema = view.resolved_schema ?? view.schema;
  const can = canOf(view);
  const tabs: TabSpec[] = [
    {
      id: "query",
      label: "Query",
      render: () => (
        <>
          <h3>Query</h3>
          <pre data-testid="view-query">{view.query ?? ""}</pre>
          <h3>Expanded query</h3>
          {view.expanded_query ? <pre>{view.expanded_query}</pre> : <p className="muted">Not expanded yet.</p>}
        </>
      ),
    },
    {
      id: "schema",
      label: "Schema",
      render: () =>
        schema && schema.columns.length > 0 ? (
          <SchemaTable schema={schema} />
        ) : (
          <p className="muted">The schema is derived when a worker analyses the view.</p>
        ),
    },
  ];
  if (can.select) tabs.push({ id: "sample", label: "Sample data", render: () => <SamplePanel path={path} title={name} /> });
  tabs.push({ id: "permissions", label: "Permissions", render: () => <PermissionsPanel base={base} kind="view" /> });
  return (
    <ObjectPage
      parts={parts}
      kind="view"
      can={can}
      owner={ownerOf(view)}
      comment={view.comment}
      onSaveComment={(comment) => save({ comment })}
      onDrop={drop}
      dropText="Only the view definition is dropped; the tables it reads stay."
      queryPath={path}
      noSelectNote={!can.select}
      facts={[
        { label: "Owner", value: ownerOf(view) ?? "—", testId: "owner" },
        { label: "Created", value: formatTimestamp(view.created_at) },
        { label: "Updated", value: formatTimestamp(view.updated_at) },
      ]}
      tabs={tabs}
    />
  );
}
