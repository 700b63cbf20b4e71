// The catalog browser: a tree on the left, the page of the selected catalog, database,
// table, view or function (or a create form) on the right. URLs:
// /catalog, /catalog/<c>, /catalog/<c>/<d>, /catalog/<c>/<d>/(table|view|function)/<name>,
// /catalog?new=catalog, /catalog/<c>?new=database, /catalog/<c>/<d>?new=table: the create
// forms live in the query string, so that no name (a catalog called "new-catalog") is taken.
import { useState, type ReactNode } from "react";
import { useQuery } from "@tanstack/react-query";
import { LIST_POLL_MS } from "../../data/client";
import {
  enc,
  get,
  type Catalog,
  type Database,
  type FunctionObject,
  type Page,
  type Table,
  type User,
} from "../../api";
import { formatTimestamp } from "../../components/jobs/time";
import { Link, navigate, pathOf, useLocation, useSegments, useTitle } from "../../router";
import { CatalogTree, type ObjectKind, type Selection } from "./Tree";
import {
  Breadcrumbs,
  DropDialog,
  EditableComment,
  ErrorAlert,
  KeyValues,
  StatusBadge,
  useCatalogQuery,
  useDelete,
  usePatch,
} from "./common";
import { NewCatalogForm } from "./forms/NewCatalogForm";
import { NewDatabaseForm } from "./forms/NewDatabaseForm";
import { NewTableForm } from "./forms/NewTableForm";
import { FunctionPage } from "./FunctionPage";
import { TablePage } from "./TablePage";
import { ViewPage } from "./ViewPage";
import "./catalog.css";

const KINDS: ObjectKind[] = ["table", "view", "function"];

export function CatalogPage({ user }: { user: User }) {
  const segments = useSegments().slice(1);
  const [c, d, kind, name] = segments;
  const creating = useLocation().search.get("new");
  const selection: Selection = {};
  let main: ReactNode;

  if (segments.length === 0 && creating === "catalog") {
    main = <NewCatalogForm />;
  } else if (segments.length === 0) {
    main = <CatalogHome />;
  } else if (segments.length === 1 && creating === "database") {
    selection.catalog = c;
    main = <NewDatabaseForm catalog={c} />;
  } else if (segments.length === 1) {
    selection.catalog = c;
    main = <CatalogView key={c} catalog={c} user={user} />;
  } else if (segments.length === 2 && creating === "table") {
    Object.assign(selection, { catalog: c, database: d });
    main = <NewTableForm catalog={c} database={d} />;
  } else if (segments.length === 2) {
    Object.assign(selection, { catalog: c, database: d });
    main = <DatabaseView key={`${c}/${d}`} catalog={c} database={d} />;
  } else if (segments.length === 4 && KINDS.includes(kind as ObjectKind)) {
    Object.assign(selection, { catalog: c, database: d, kind: kind as ObjectKind, name });
    const props = { catalog: c, database: d, name };
    const key = segments.join("/");
    main =
      kind === "table" ? (
        <TablePage key={key} {...props} />
      ) : kind === "view" ? (
        <ViewPage key={key} {...props} />
      ) : (
        <FunctionPage key={key} {...props} />
      );
  } else {
    main = (
      <div className="cat-main-inner">
        <h1>Page not found</h1>
        <p>
          Nothing lives at this address. <Link to="/catalog">Back to the catalogs</Link>.
        </p>
      </div>
    );
  }

  return (
    <div className="cat-layout">
      <CatalogTree selection={selection} />
      <section className="cat-main" aria-label="Catalog object">
        {main}
      </section>
    </div>
  );
}

function CatalogHome() {
  useTitle("Catalog");
  const catalogs = useCatalogQuery<Page<Catalog>>("/catalogs?page_size=200");
  return (
    <div className="cat-main-inner">
      <div className="cat-header">
        <h1>Catalogs</h1>
        <div className="spacer" />
        <button type="button" className="primary" onClick={() => navigate("/catalog?new=catalog")}>
          New catalog
        </button>
      </div>
      <ErrorAlert error={catalogs.error} />
      {catalogs.isPending ? <p className="muted">Loading catalogs…</p> : null}
      {catalogs.data && catalogs.data.items.length === 0 ? (
        <p className="muted">No catalogs yet. Create one to get started.</p>
      ) : null}
      {catalogs.data && catalogs.data.items.length > 0 ? (
        <table className="grid">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Owner</th>
              <th scope="col">Comment</th>
            </tr>
          </thead>
          <tbody>
            {catalogs.data.items.map((catalog) => (
              <tr key={catalog.name}>
                <td>
                  <Link to={pathOf("catalog", catalog.name)}>{catalog.name}</Link>
                </td>
                <td>{catalog.owner}</td>
                <td className="cat-cell-comment">{catalog.comment}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}

interface Counted {
  tables: Table[];
  views: Table[];
  functions: FunctionObject[];
  more: boolean;
}

async function databaseChildren(catalog: string, database: string, signal?: AbortSignal): Promise<Counted> {
  const base = `/catalogs/${enc(catalog)}/databases/${enc(database)}`;
  const [tables, views, functions] = await Promise.all([
    get<Page<Table>>(`${base}/tables?page_size=200`, { signal }),
    get<Page<Table>>(`${base}/views?page_size=200`, { signal }),
    get<Page<FunctionObject>>(`${base}/functions?page_size=200`, { signal }),
  ]);
  return {
    tables: tables.items,
    views: views.items,
    functions: functions.items,
    more: Boolean(tables.next_page_token || views.next_page_token || functions.next_page_token),
  };
}

function CatalogView({ catalog, user }: { catalog: string; user: User }) {
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
          `database ${db.name}: ${children.tables.length} tables, ${children.views.length} views, ` +
            `${children.functions.length} functions${children.more ? " (and more)" : ""}`,
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
        <button type="button" className="primary" onClick={() => navigate(`${pathOf("catalog", catalog)}?new=database`)}>
          New database
        </button>
        <button type="button" className="danger" onClick={() => void askDrop()}>
          Drop catalog
        </button>
      </div>
      <EditableComment
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
          {dbs.data && dbs.data.items.length > 1 ? (
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
        <dd>{formatTimestamp((cat as Catalog & { created_at?: string }).created_at)}</dd>
        <dt>Updated</dt>
        <dd>{formatTimestamp((cat as Catalog & { updated_at?: string }).updated_at)}</dd>
      </dl>
      <h2>Databases</h2>
      <ErrorAlert error={dbs.error} />
      {dbs.isPending ? <p className="muted">Loading databases…</p> : null}
      {dbs.data && dbs.data.items.length === 0 ? <p className="muted">No databases.</p> : null}
      {dbs.data && dbs.data.items.length > 0 ? (
        <table className="grid" data-testid="children">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Owner</th>
              <th scope="col">Comment</th>
            </tr>
          </thead>
          <tbody>
            {dbs.data.items.map((db) => (
              <tr key={db.name}>
                <td>
                  <Link to={pathOf("catalog", catalog, db.name)}>{db.name}</Link>
                  {db.name.toLowerCase() === cat.default_database.toLowerCase() ? (
                    <span className="badge"> default</span>
                  ) : null}
                </td>
                <td>{(db as Database & { owner?: string }).owner ?? ""}</td>
                <td className="cat-cell-comment">{db.comment}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {dbs.data?.next_page_token ? <p className="muted">More databases are listed in the tree.</p> : null}
      <h2>Properties</h2>
      <KeyValues values={cat.properties} empty="No properties." />
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
          {user.username !== cat.owner && !user.is_admin ? (
            <p className="muted">Only its owner, or an admin, may drop it.</p>
          ) : null}
        </DropDialog>
      ) : null}
    </div>
  );
}

function DatabaseView({ catalog, database }: { catalog: string; database: string }) {
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

  if (info.error && !info.data)
    return (
      <div className="cat-main-inner">
        <Breadcrumbs parts={[catalog]} />
        <ErrorAlert error={info.error} />
      </div>
    );
  if (!info.data) return <p className="cat-main-inner muted">Loading database…</p>;
  const db = info.data;
  const kids = children.data;
  const count = kids ? kids.tables.length + kids.views.length + kids.functions.length : 0;

  return (
    <div className="cat-main-inner">
      <Breadcrumbs parts={[catalog]} />
      <div className="cat-header">
        <h1>
          <span className="badge info">database</span> {db.catalog}.{db.name}
        </h1>
        <div className="spacer" />
        <button
          type="button"
          className="primary"
          onClick={() => navigate(`${pathOf("catalog", catalog, database)}?new=table`)}
        >
          New table
        </button>
        <button type="button" className="danger" onClick={() => setDropping(true)} disabled={!kids}>
          Drop database
        </button>
      </div>
      <EditableComment
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
        <dd>{(db as Database & { owner?: string }).owner ?? "—"}</dd>
        <dt>Created</dt>
        <dd>{formatTimestamp((db as Database & { created_at?: string }).created_at)}</dd>
      </dl>
      <ErrorAlert error={children.error} />
      {children.isPending ? <p className="muted">Loading tables, views and functions…</p> : null}
      {kids ? (
        <>
          <h2>Tables</h2>
          {kids.tables.length === 0 ? (
            <p className="muted">No tables.</p>
          ) : (
            <table className="grid" data-testid="database-tables">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Status</th>
                  <th scope="col">Storage</th>
                  <th scope="col">Created by</th>
                  <th scope="col">Comment</th>
                </tr>
              </thead>
              <tbody>
                {kids.tables.map((table) => (
                  <tr key={table.name} data-testid={`row-${table.name}`}>
                    <td>
                      <Link to={pathOf("catalog", catalog, database, "table", table.name)}>{table.name}</Link>
                    </td>
                    <td>
                      <StatusBadge table={table} />
                    </td>
                    <td>{table.managed ? "managed" : "external"}</td>
                    <td>{table.created_by ?? ""}</td>
                    <td className="cat-cell-comment">{table.comment}</td>
                  </tr>
                ))}
              </tbody>
            </table>
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
              It holds {kids.tables.length} tables, {kids.views.length} views and {kids.functions.length} functions
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

