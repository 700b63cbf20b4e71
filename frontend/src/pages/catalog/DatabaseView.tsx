// /catalog/<c>/<d>: one database — comment, facts, its tables/views/functions (polled while a
// table is staged), properties, permissions, drop. New table/view/function need CREATE on it;
// Edit and Drop need MANAGE (`can`).
import { useRef, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { DataGrid } from "../../components/grid/DataGrid";
import { LIST_POLL_MS } from "../../data/client";
import { enc, type Database } from "../../api";
import { countOf, formatTimestamp } from "../../format";
import { Link, navigate, pathOf, useTitle } from "../../router";
import {
  Breadcrumbs,
  DropDialog,
  EditableComment,
  ErrorAlert,
  KeyValues,
  ReadOnlyNote,
  StatusBadge,
  canOf,
  useCatalogQuery,
  useDelete,
  usePatch,
} from "./common";
import { databaseChildren } from "./databaseChildren";
import { PermissionsPanel } from "./object/PermissionsPanel";
import { ownerOf } from "./object/parts";
import { UploadDialog } from "./upload/UploadDialog";
import { carriesFiles, usePendingFile } from "./upload/pendingUpload";

export function DatabaseView({ catalog, database }: { catalog: string; database: string }) {
  useTitle(`${catalog}.${database}`);
  const base = `/catalogs/${enc(catalog)}/databases/${enc(database)}`;
  const info = useCatalogQuery<Database>(base);
  const save = usePatch<Database>(base);
  const remove = useDelete();
  // The tables, views and functions at once; polled while a table is staged.
  const children = useQuery({
    queryKey: ["catalogs", base, "children"],
    queryFn: ({ signal }) => databaseChildren(catalog, database, signal),
    refetchInterval: (query) =>
      query.state.data?.tables.some((t) => t.status === "staged") ? LIST_POLL_MS : false,
  });
  const [dropping, setDropping] = useState(false);
  // A file to upload: picked, dropped on this page, or dropped on the database in the tree.
  const [picked, setPicked] = useState<File | null>(null);
  const [dropped, takeDropped] = usePendingFile(catalog, database);
  const [dragging, setDragging] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);
  const uploading = picked ?? dropped;

  if (info.error && !info.data)
    return (
      <div className="cat-main-inner">
        <Breadcrumbs parts={[catalog]} />
        <ErrorAlert error={info.error} />
      </div>
    );
  if (!info.data) return <p className="cat-main-inner muted">Loading database…</p>;
  const db = info.data;
  const can = canOf(db);
  const kids = children.data;
  const count = kids ? kids.tables.length + kids.views.length + kids.functions.length : 0;

  return (
    <div
      className={dragging && can.create ? "cat-main-inner drop-target" : "cat-main-inner"}
      data-testid="database-page"
      onDragOver={(event) => {
        if (!can.create || !carriesFiles(event)) return;
        event.preventDefault();
        setDragging(true);
      }}
      onDragLeave={(event) => {
        if (!event.currentTarget.contains(event.relatedTarget as Node | null)) setDragging(false);
      }}
      onDrop={(event) => {
        setDragging(false);
        const file = event.dataTransfer.files[0];
        if (!can.create || !file) return;
        event.preventDefault();
        setPicked(file);
      }}
    >
      <Breadcrumbs parts={[catalog]} />
      <div className="cat-header">
        <h1>
          <span className="badge info">database</span> {db.catalog}.{db.name}
        </h1>
        <div className="spacer" />
        {can.create ? (
          <>
            <button
              type="button"
              className="primary"
              onClick={() => navigate(`${pathOf("catalog", catalog, database)}?new=table`)}
            >
              New table
            </button>
            <button type="button" onClick={() => navigate(`${pathOf("catalog", catalog, database)}?new=view`)}>
              New view
            </button>
            <button type="button" onClick={() => navigate(`${pathOf("catalog", catalog, database)}?new=function`)}>
              New function
            </button>
            <button type="button" onClick={() => fileInput.current?.click()} title="Or drop a CSV or Parquet file here">
              Upload file
            </button>
            <input
              ref={fileInput}
              type="file"
              hidden
              aria-label="File to upload"
              data-testid="upload-input"
              accept=".csv,.parquet,text/csv,application/vnd.apache.parquet"
              onChange={(event) => {
                const file = event.target.files?.[0];
                event.target.value = "";
                if (file) setPicked(file);
              }}
            />
          </>
        ) : null}
        {can.drop ? (
          <button type="button" className="danger" onClick={() => setDropping(true)} disabled={!kids}>
            Drop database
          </button>
        ) : null}
      </div>
      <ReadOnlyNote can={can} what="database" owner={db.owner} />
      <EditableComment
        editable={can.modify}
        value={db.comment}
        onSave={async (comment) => {
          await save({ comment });
        }}
      />
      <dl className="cat-facts">
        <dt>Catalog</dt>
        <dd>
          <Link to={pathOf("catalog", db.catalog)}>{db.catalog}</Link>
        </dd>
        <dt>Owner</dt>
        <dd>{db.owner ?? "—"}</dd>
        <dt>Created</dt>
        <dd>{formatTimestamp(db.created_at)}</dd>
      </dl>
      <ErrorAlert error={children.error} />
      {children.isPending ? <p className="muted">Loading tables, views and functions…</p> : null}
      {kids ? (
        <>
          <h2>Tables</h2>
          {kids.tables.length === 0 ? (
            <p className="muted">No tables.</p>
          ) : (
            <DataGrid
              rows={kids.tables}
              testId="database-tables"
              rowKey={(table) => table.name}
              rowAttributes={(table) => ({ "data-testid": `row-${table.name}` })}
              columns={[
                {
                  header: "Name",
                  cell: (table) => (
                    <Link to={pathOf("catalog", catalog, database, "table", table.name)}>{table.name}</Link>
                  ),
                },
                { header: "Status", cell: (table) => <StatusBadge table={table} /> },
                { header: "Storage", cell: (table) => (table.managed ? "managed" : "external") },
                { header: "Owner", cell: (table) => ownerOf(table) ?? "" },
                { header: "Comment", className: "cat-cell-comment", cell: (table) => table.comment },
              ]}
            />
          )}
          <h2>Views</h2>
          {kids.views.length === 0 ? (
            <p className="muted">No views.</p>
          ) : (
            <ul className="cat-list">
              {kids.views.map((view) => (
                <li key={view.name}>
                  <Link to={pathOf("catalog", catalog, database, "view", view.name)}>{view.name}</Link>{" "}
                  <span className="muted">{view.comment}</span>
                </li>
              ))}
            </ul>
          )}
          <h2>Functions</h2>
          {kids.functions.length === 0 ? (
            <p className="muted">No functions.</p>
          ) : (
            <ul className="cat-list">
              {kids.functions.map((fn) => (
                <li key={fn.name}>
                  <Link to={pathOf("catalog", catalog, database, "function", fn.name)}>{fn.name}</Link>{" "}
                  <span className="badge">{fn.language}</span> <span className="muted">{fn.comment}</span>
                </li>
              ))}
            </ul>
          )}
          {kids.more ? <p className="muted">Only the first 200 of each kind are listed; see the tree for more.</p> : null}
        </>
      ) : null}
      <h2>Properties</h2>
      <KeyValues values={db.properties} empty="No properties." />
      <h2>Permissions</h2>
      <PermissionsPanel base={base} kind="database" />
      {uploading && can.create ? (
        <UploadDialog
          key={`${uploading.name}:${uploading.size}:${uploading.lastModified}`}
          catalog={catalog}
          database={database}
          file={uploading}
          tables={(kids?.tables ?? []).map((table) => table.name)}
          onClose={() => {
            setPicked(null);
            takeDropped();
          }}
        />
      ) : null}
      {dropping && kids ? (
        <DropDialog
          what={`database ${db.catalog}.${db.name}`}
          name={db.name}
          typeToConfirm={count > 0}
          onClose={() => setDropping(false)}
          onConfirm={async () => {
            await remove(`${base}${count > 0 ? "?cascade=true" : ""}`);
            setDropping(false);
            navigate(pathOf("catalog", catalog));
          }}
        >
          {count > 0 ? (
            <p>
              It holds {countOf(kids.tables.length, "table")}, {countOf(kids.views.length, "view")} and {countOf(kids.functions.length, "function")}
              {kids.more ? " (or more)" : ""}; all of them are dropped too, and the data of managed tables is deleted.
            </p>
          ) : (
            <p>The database is empty.</p>
          )}
        </DropDialog>
      ) : null}
    </div>
  );
}
