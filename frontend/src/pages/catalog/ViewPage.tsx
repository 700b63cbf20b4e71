// The page of one view: its query (as written and expanded), schema, details, sample data
// (with SELECT) and permissions. A view reads its tables with its owner's rights.
import { useState } from "react";
import { sqlPath } from "../../api";
import { formatTimestamp } from "../../components/jobs/time";
import { useTitle } from "../../router";
import { DropDialog, EditableComment, ReadOnlyNote, canOf } from "./common";
import { SamplePanel } from "./object/panels";
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
import { SchemaTable } from "./object/SchemaTable";

export function ViewPage({ catalog, database, name }: ObjectProps) {
  const parts = [catalog, database, name];
  const path = sqlPath(parts);
  useTitle(parts.join("."));
  const { base, info, save, drop } = useObject<TableInfo>({ catalog, database, name }, "views");
  const [dropping, setDropping] = useState(false);

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
  const owner = ownerOf(view);
  return (
    <div className="cat-main-inner">
      <Header
        parts={parts}
        kind="view"
        actions={
          <>
            {can.select ? (
              <button type="button" onClick={() => queryInEditor(path, name)}>
                Query
              </button>
            ) : null}
            {can.drop ? (
              <button type="button" className="danger" onClick={() => setDropping(true)}>
                Drop view
              </button>
            ) : null}
          </>
        }
      />
      <ReadOnlyNote can={can} what="view" owner={owner} />
      {!can.select ? <NoSelectNote what="view" /> : null}
      <EditableComment value={view.comment} editable={can.modify} onSave={(comment) => save({ comment })} />
      <dl className="cat-facts">
        <dt>Owner</dt>
        <dd data-testid="owner">{owner ?? "—"}</dd>
        <dt>Created</dt>
        <dd>{formatTimestamp(view.created_at)}</dd>
        <dt>Updated</dt>
        <dd>{formatTimestamp(view.updated_at)}</dd>
      </dl>
      <Tabs tabs={tabs} />
      {dropping ? (
        <DropDialog
          what={`view ${parts.join(".")}`}
          name={name}
          typeToConfirm={false}
          onClose={() => setDropping(false)}
          onConfirm={drop}
        >
          <p>Only the view definition is dropped; the tables it reads stay.</p>
        </DropDialog>
      ) : null}
    </div>
  );
}

