// The page of one function: language, owner, return type; tabs Definition (parameters and
// implementation) and Permissions.
import { DataGrid } from "../../components/grid/DataGrid";
import { formatTimestamp } from "../../format";
import { useTitle } from "../../router";
import { canOf } from "./common";
import { PermissionsPanel } from "./object/PermissionsPanel";
import { ObjectPage } from "./object/ObjectPage";
import { NotLoaded, ownerOf, useObject, type FunctionInfo, type ObjectProps } from "./object/parts";

export function FunctionPage({ catalog, database, name }: ObjectProps) {
  const parts = [catalog, database, name];
  useTitle(parts.join("."));
  const { base, info, save, drop } = useObject<FunctionInfo>({ catalog, database, name }, "functions");

  if (!info.data) return <NotLoaded parts={parts} error={info.error} what="function" />;
  const fn = info.data;
  const can = canOf(fn);
  return (
    <ObjectPage
      parts={parts}
      kind="function"
      can={can}
      owner={ownerOf(fn)}
      comment={fn.comment}
      onSaveComment={(comment) => save({ comment })}
      onDrop={drop}
      dropText="Statements that call it will fail afterwards."
      badges={<span className="badge">{fn.language}</span>}
      facts={[
        { label: "Language", value: fn.language },
        { label: "Owner", value: ownerOf(fn) ?? "—", testId: "owner" },
        { label: "Return type", value: fn.return_type || "—", className: "mono" },
        { label: "Created", value: formatTimestamp(fn.created_at) },
      ]}
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
  );
}
