// /catalog/<c>: one catalog — comment, owner, default database, databases, properties,
// permissions, drop. New database needs CREATE on it; Edit and Drop need MANAGE (`can`).
import { useState } from "react";
import { enc, type Catalog, type Database, type Page } from "../../api";
import { DataGrid } from "../../components/grid/DataGrid";
import { countOf, formatTimestamp } from "../../format";
import { Link, navigate, pathOf, useTitle } from "../../router";
import {
  Breadcrumbs,
  DropDialog,
  EditableComment,
  ErrorAlert,
  KeyValues,
  ReadOnlyNote,
  canOf,
  useCatalogQuery,
  useDelete,
  usePatch,
} from "./common";
import { databaseChildren } from "./databaseChildren";
import { PermissionsPanel } from "./object/PermissionsPanel";

export function CatalogView({ catalog }: { catalog: string }) {
  useTitle(catalog);
  const info = useCatalogQuery<Catalog>(`/catalogs/${enc(catalog)}`);
  const dbs = useCatalogQuery<Page<Database>>(`/catalogs/${enc(catalog)}/databases?page_size=200`);
  const save = usePatch<Catalog>(`/catalogs/${enc(catalog)}`);
  const remove = useDelete();
  const [dropping, setDropping] = useState<null | { nonEmpty: boolean; summary: string[] }>(null);
  const [defaultDb, setDefaultDb] = useState<string | null>(null);
  const [defaultError, setDefaultError] = useState<unknown>(null);

  if (info.error && !info.data)
    return (
      <div className="cat-main-inner">
        <Breadcrumbs parts={[]} />
        <ErrorAlert error={info.error} />
      </div>
    );
  if (!info.data) return <p className="cat-main-inner muted">Loading catalog…</p>;
  const cat = info.data;
  const can = canOf(cat);

  const askDrop = async () => {
    const databases = dbs.data?.items ?? [];
    const summary: string[] = [];
    let nonEmpty = databases.length > 1 || Boolean(dbs.data?.next_page_token);
    for (const db of databases.slice(0, 20)) {
      try {
        const children = await databaseChildren(catalog, db.name);
        const count = children.tables.length + children.views.length + children.functions.length;
        if (count > 0) nonEmpty = true;
        summary.push(
          `database ${db.name}: ${countOf(children.tables.length, "table")}, ${countOf(children.views.length, "view")}, ` +
            `${countOf(children.functions.length, "function")}${children.more ? " (and more)" : ""}`,
        );
      } catch {
        summary.push(`database ${db.name}`);
      }
    }
    if (databases.length > 20) summary.push(`… and ${databases.length - 20} more databases`);
    setDropping({ nonEmpty, summary });
  };

  const saveDefault = async () => {
    if (!defaultDb) return;
    setDefaultError(null);
    try {
      await save({ default_database: defaultDb });
      setDefaultDb(null);
    } catch (error) {
      setDefaultError(error);
    }
  };

  return (
    <div className="cat-main-inner">
      <Breadcrumbs parts={[]} />
      <div className="cat-header">
        <h1>
          <span className="badge info">catalog</span> {cat.name}
        </h1>
        <div className="spacer" />
        {can.create ? (
          <button type="button" className="primary" onClick={() => navigate(`${pathOf("catalog", catalog)}?new=database`)}>
            New database
          </button>
        ) : null}
        {can.drop ? (
          <button type="button" className="danger" onClick={() => void askDrop()}>
            Drop catalog
          </button>
        ) : null}
      </div>
      <ReadOnlyNote can={can} what="catalog" owner={cat.owner} />
      <EditableComment
        editable={can.modify}
        value={cat.comment}
        onSave={async (comment) => {
          await save({ comment });
        }}
      />
      <dl className="cat-facts">
        <dt>Owner</dt>
        <dd>{cat.owner ?? "—"}</dd>
        <dt>Default database</dt>
        <dd>
          <Link to={pathOf("catalog", catalog, cat.default_database)}>{cat.default_database}</Link>{" "}
          {can.modify && dbs.data && dbs.data.items.length > 1 ? (
            <span className="cat-inline">
              <label className="inline">
                Change to
                <select value={defaultDb ?? cat.default_database} onChange={(event) => setDefaultDb(event.target.value)}>
                  {dbs.data.items.map((db) => (
                    <option key={db.name} value={db.name}>
                      {db.name}
                    </option>
                  ))}
                </select>
              </label>
              <button
                type="button"
                className="small"
                disabled={!defaultDb || defaultDb === cat.default_database}
                onClick={() => void saveDefault()}
              >
                Save
              </button>
            </span>
          ) : null}
          {defaultError ? <div className="field-error">{(defaultError as Error).message}</div> : null}
        </dd>
        <dt>Created</dt>
        <dd>{formatTimestamp(cat.created_at)}</dd>
        <dt>Updated</dt>
        <dd>{formatTimestamp(cat.updated_at)}</dd>
      </dl>
      <h2>Databases</h2>
      <ErrorAlert error={dbs.error} />
      {dbs.isPending ? <p className="muted">Loading databases…</p> : null}
      {dbs.data && dbs.data.items.length === 0 ? <p className="muted">No databases.</p> : null}
      {dbs.data ? (
        <DataGrid
          rows={dbs.data.items}
          testId="children"
          rowKey={(db) => db.name}
          columns={[
            {
              header: "Name",
              cell: (db) => (
                <>
                  <Link to={pathOf("catalog", catalog, db.name)}>{db.name}</Link>
                  {db.name.toLowerCase() === cat.default_database.toLowerCase() ? (
                    <span className="badge"> default</span>
                  ) : null}
                </>
              ),
            },
            { header: "Owner", cell: (db) => db.owner ?? "" },
            { header: "Comment", className: "cat-cell-comment", cell: (db) => db.comment },
          ]}
        />
      ) : null}
      {dbs.data?.next_page_token ? <p className="muted">More databases are listed in the tree.</p> : null}
      <h2>Properties</h2>
      <KeyValues values={cat.properties} empty="No properties." />
      <h2>Permissions</h2>
      <PermissionsPanel base={`/catalogs/${enc(catalog)}`} kind="catalog" />
      {dropping ? (
        <DropDialog
          what={`catalog ${cat.name}`}
          name={cat.name}
          typeToConfirm={dropping.nonEmpty}
          onClose={() => setDropping(null)}
          onConfirm={async () => {
            await remove(`/catalogs/${enc(catalog)}${dropping.nonEmpty ? "?cascade=true" : ""}`);
            setDropping(null);
            navigate("/catalog");
          }}
        >
          <p>
            This drops catalog <strong>{cat.name}</strong>
            {dropping.nonEmpty ? " and everything in it (managed table data is deleted):" : " and its empty default database."}
          </p>
          {dropping.summary.length > 0 ? (
            <ul>
              {dropping.summary.map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          ) : null}
        </DropDialog>
      ) : null}
    </div>
  );
}
