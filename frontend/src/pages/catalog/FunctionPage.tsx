// The page of one function: language, owner, return type; tabs Definition (parameters and
// implementation) and Permissions.
import { useState } from "react";
import { DataGrid } from "../../components/grid/DataGrid";
import { formatTimestamp } from "../../components/jobs/time";
import { useTitle } from "../../router";
import { DropDialog, EditableComment, ReadOnlyNote, canOf } from "./common";
import { PermissionsPanel } from "./object/PermissionsPanel";
import { Header, NotLoaded, Tabs, ownerOf, useObject, type FunctionInfo, type ObjectProps } from "./object/parts";

export function FunctionPage({ catalog, database, name }: ObjectProps) {
  const parts = [catalog, database, name];
  useTitle(parts.join("."));
  const { base, info, save, drop } = useObject<FunctionInfo>({ catalog, database, name }, "functions");
  const [dropping, setDropping] = useState(false);

  if (!info.data) return <NotLoaded parts={parts} error={info.error} what="function" />;
  const fn = info.data;
  const can = canOf(fn);
  const owner = ownerOf(fn);
  return (
    <div className="cat-main-inner">
      <Header
        parts={parts}
        kind="function"
        actions={
          can.drop ? (
            <button type="button" className="danger" onClick={() => setDropping(true)}>
              Drop function
            </button>
          ) : null
        }
      >
        <span className="badge">{fn.language}</span>
      </Header>
      <ReadOnlyNote can={can} what="function" owner={owner} />
      <EditableComment value={fn.comment} editable={can.modify} onSave={(comment) => save({ comment })} />
      <dl className="cat-facts">
        <dt>Language</dt>
        <dd>{fn.language}</dd>
        <dt>Owner</dt>
        <dd data-testid="owner">{owner ?? "—"}</dd>
        <dt>Return type</dt>
        <dd className="mono">{fn.return_type || "—"}</dd>
        <dt>Created</dt>
        <dd>{formatTimestamp(fn.created_at)}</dd>
      </dl>
      <Tabs
        tabs={[
          {
            id: "definition",
            label: "Definition",
            render: () => (
              <>
                <h3>Parameters</h3>
                {fn.parameters && fn.parameters.length > 0 ? (
                  <DataGrid
                    rows={fn.parameters}
                    rowKey={(p) => p.name}
                    columns={[
                      { header: "Name", className: "mono", cell: (p) => p.name },
                      { header: "Type", className: "mono", cell: (p) => p.data_type },
                    ]}
                  />
                ) : (
                  <p className="muted">No declared parameters.</p>
                )}
                <h3>Implementation</h3>
                <pre data-testid="function-implementation">{fn.implementation}</pre>
              </>
            ),
          },
          { id: "permissions", label: "Permissions", render: () => <PermissionsPanel base={base} kind="function" /> },
        ]}
      />
      {dropping ? (
        <DropDialog
          what={`function ${parts.join(".")}`}
          name={name}
          typeToConfirm={false}
          onClose={() => setDropping(false)}
          onConfirm={drop}
        >
          <p>Statements that call it will fail afterwards.</p>
        </DropDialog>
      ) : null}
    </div>
  );
}


