// The left pane: catalogs → databases → Tables / Views / Functions → objects, each level
// loaded when first expanded (page_size 200, "Load more"), expanded along the URL's object,
// plus a debounced search over /search. The server lists only what the user may see.
import { useState, type KeyboardEvent } from "react";
import { qs, type Catalog, type Database } from "../../api";
import type { components } from "../../openapi/schema";
import { LoadMore } from "../../components/grid/DataGrid";
import { useDebounced, usePagedQuery } from "../../data/queries";
import { Link, navigate, pathOf } from "../../router";
import { errorMessage, useMayCreateCatalog, useRefreshCatalog } from "./common";
import { carriesFiles, offerFile } from "./upload/pendingUpload";

const PAGE_SIZE = 200;

export type ObjectKind = "table" | "view" | "function";

/** What the URL points at, below /catalog. */
export interface Selection {
  catalog?: string;
  database?: string;
  kind?: ObjectKind;
  name?: string;
}

const same = (a: string | undefined, b: string) => a !== undefined && a.toLowerCase() === b.toLowerCase();

interface Named {
  name: string;
  status?: string;
  staged_by_job?: string | null;
}

type PagedState<T> = ReturnType<typeof usePagedQuery<T>>;

/** A lazily loaded tree level: loaded once expanded, refreshed with the catalog queries. */
function usePaged<T>(path: string, active: boolean, poll?: (items: T[]) => boolean) {
  return usePagedQuery<T>(path, { enabled: active, pageSize: PAGE_SIZE, poll });
}

function Toggle({ open, label, onToggle }: { open: boolean; label: string; onToggle: () => void }) {
  return (
    <button
      type="button"
      className="tree-toggle"
      aria-expanded={open}
      aria-label={`${open ? "Collapse" : "Expand"} ${label}`}
      onClick={onToggle}
      tabIndex={-1}
      data-tree-toggle=""
    >
      {open ? "▾" : "▸"}
    </button>
  );
}

function ListStatus<T>({
  state,
  empty,
  depth,
}: {
  state: PagedState<T>;
  empty: string;
  depth: number;
}) {
  const style = { paddingLeft: depth * 14 + 22 };
  return (
    <>
      {state.error ? (
        <li className="tree-note error" style={style} role="alert">
          {errorMessage(state.error)}
        </li>
      ) : null}
      {state.loading && !state.loaded ? (
        <li className="tree-note muted" style={style}>
          Loading…
        </li>
      ) : null}
      {state.loaded && state.items.length === 0 ? (
        <li className="tree-note muted" style={style}>
          {empty}
        </li>
      ) : null}
      {state.next ? (
        <li style={style}>
          <button
            type="button"
            className="link small"
            data-tree-focus=""
            onClick={state.loadMore}
            disabled={state.loading}
          >
            {state.loading ? "Loading…" : "Load more"}
          </button>
        </li>
      ) : null}
    </>
  );
}

/** Open, and opened again whenever the URL's object comes to lie below it. */
function useOpen(onPath: boolean): [boolean, (open: boolean) => void] {
  const [open, setOpen] = useState(onPath);
  const [wasOnPath, setWasOnPath] = useState(onPath);
  if (onPath !== wasOnPath) {
    setWasOnPath(onPath);
    if (onPath) setOpen(true);
  }
  return [open, setOpen];
}

const GROUPS: { kind: ObjectKind; label: string; collection: string }[] = [
  { kind: "table", label: "Tables", collection: "tables" },
  { kind: "view", label: "Views", collection: "views" },
  { kind: "function", label: "Functions", collection: "functions" },
];

function ObjectGroup({
  catalog,
  database,
  group,
  selection,
}: {
  catalog: string;
  database: string;
  group: (typeof GROUPS)[number];
  selection: Selection;
}) {
  const onPath =
    same(selection.catalog, catalog) && same(selection.database, database) && selection.kind === group.kind;
  const [open, setOpen] = useOpen(onPath);
  const list = usePaged<Named>(
    `/catalogs/${encodeURIComponent(catalog)}/databases/${encodeURIComponent(database)}/${group.collection}`,
    open,
    (items) => items.some((item) => item.status === "staged"),
  );
  return (
    <li className="tree-item" data-testid={`tree-group-${group.collection}`}>
      <div className="tree-row" style={{ paddingLeft: 2 * 14 }}>
        <Toggle open={open} label={`${group.label} of ${database}`} onToggle={() => setOpen(!open)} />
        <button
          type="button"
          className="tree-group"
          aria-expanded={open}
          data-tree-focus=""
          onClick={() => setOpen(!open)}
        >
          {group.label}
        </button>
      </div>
      {open ? (
        <ul role="group">
          {list.items.map((item) => {
            const selected = onPath && same(selection.name, item.name);
            return (
              <li key={item.name} className="tree-item">
                <div className={selected ? "tree-row selected" : "tree-row"} style={{ paddingLeft: 3 * 14 + 22 }}>
                  <Link
                    to={pathOf("catalog", catalog, database, group.kind, item.name)}
                    className="tree-link"
                    data-tree-focus=""
                    aria-current={selected ? "page" : undefined}
                    title={item.name}
                  >
                    {item.name}
                  </Link>
                  {item.status === "staged" ? (
                    <span className="badge staged" title={`Being created by job ${item.staged_by_job ?? ""}`}>
                      staged
                    </span>
                  ) : null}
                </div>
              </li>
            );
          })}
          <ListStatus state={list} empty={`No ${group.label.toLowerCase()}.`} depth={3} />
        </ul>
      ) : null}
    </li>
  );
}

function DatabaseNode({ catalog, database, selection }: { catalog: string; database: Database; selection: Selection }) {
  const onPath = same(selection.catalog, catalog) && same(selection.database, database.name);
  const selected = onPath && !selection.kind;
  const [open, setOpen] = useOpen(onPath);
  const [dragging, setDragging] = useState(false);
  const rowClass = `tree-row${selected ? " selected" : ""}${dragging ? " drop-target" : ""}`;
  return (
    <li className="tree-item">
      <div
        className={rowClass}
        style={{ paddingLeft: 14 }}
        data-testid={`tree-database-${catalog}.${database.name}`}
        // A file dropped here opens the database's page with the upload dialog for it.
        onDragOver={(event) => {
          if (!carriesFiles(event)) return;
          event.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(event) => {
          setDragging(false);
          const file = event.dataTransfer.files[0];
          if (!file) return;
          event.preventDefault();
          offerFile(catalog, database.name, file);
          navigate(pathOf("catalog", catalog, database.name));
        }}
      >
        <Toggle open={open} label={database.name} onToggle={() => setOpen(!open)} />
        <Link
          to={pathOf("catalog", catalog, database.name)}
          className="tree-link"
          data-tree-focus=""
          aria-current={selected ? "page" : undefined}
          title={database.name}
        >
          {database.name}
        </Link>
      </div>
      {open ? (
        <ul role="group">
          {GROUPS.map((group) => (
            <ObjectGroup key={group.kind} catalog={catalog} database={database.name} group={group} selection={selection} />
          ))}
        </ul>
      ) : null}
    </li>
  );
}

function CatalogNode({ catalog, selection }: { catalog: Catalog; selection: Selection }) {
  const onPath = same(selection.catalog, catalog.name);
  const selected = onPath && !selection.database;
  const [open, setOpen] = useOpen(onPath);
  const list = usePaged<Database>(`/catalogs/${encodeURIComponent(catalog.name)}/databases`, open);
  return (
    <li className="tree-item">
      <div className={selected ? "tree-row selected" : "tree-row"}>
        <Toggle open={open} label={catalog.name} onToggle={() => setOpen(!open)} />
        <Link
          to={pathOf("catalog", catalog.name)}
          className="tree-link"
          data-tree-focus=""
          aria-current={selected ? "page" : undefined}
          title={catalog.name}
        >
          {catalog.name}
        </Link>
      </div>
      {open ? (
        <ul role="group">
          {list.items.map((database) => (
            <DatabaseNode key={database.name} catalog={catalog.name} database={database} selection={selection} />
          ))}
          <ListStatus state={list} empty="No databases." depth={1} />
        </ul>
      ) : null}
    </li>
  );
}

/** Arrow keys: up/down move between rows, right expands, left collapses. */
function onTreeKey(event: KeyboardEvent<HTMLElement>) {
  const container = event.currentTarget;
  const items = Array.from(container.querySelectorAll<HTMLElement>("[data-tree-focus]"));
  const index = items.indexOf(document.activeElement as HTMLElement);
  if (index < 0) return;
  const row = items[index].closest(".tree-row");
  const toggle = row?.querySelector<HTMLButtonElement>("[data-tree-toggle]");
  if (event.key === "ArrowDown" && index < items.length - 1) items[index + 1].focus();
  else if (event.key === "ArrowUp" && index > 0) items[index - 1].focus();
  else if (event.key === "ArrowRight" && toggle?.getAttribute("aria-expanded") === "false") toggle.click();
  else if (event.key === "ArrowLeft" && toggle?.getAttribute("aria-expanded") === "true") toggle.click();
  else if (event.key === "Home") items[0]?.focus();
  else if (event.key === "End") items[items.length - 1]?.focus();
  else return;
  event.preventDefault();
}

/** A search hit; `kind` is free text in the OpenAPI document, one of four in docs/api.md. */
type SearchHit = Omit<components["schemas"]["SearchHitOut"], "kind"> & {
  kind: "table" | "view" | "function" | "column";
};

function Search({ q, kind }: { q: string; kind: string }) {
  const settled = useDebounced(`/search${qs({ q, kind: kind === "all" ? undefined : kind })}`, 250);
  const found = usePagedQuery<SearchHit>(settled, { pageSize: 50 });
  const hits = found.loaded ? found.items : null;
  const { error, loading, next } = found;

  return (
    <div className="tree-search-results" aria-live="polite" data-testid="search-results">
      {error ? (
        <div className="alert" role="alert">
          {errorMessage(error)}
        </div>
      ) : null}
      {hits === null || (loading && hits.length === 0) ? <p className="muted">Searching…</p> : null}
      {hits !== null && hits.length === 0 && !loading ? <p className="muted">No matches.</p> : null}
      {hits && hits.length > 0 ? (
        <ul className="search-hits">
          {hits.map((hit) => {
            const objectKind = hit.kind === "column" ? (hit.object_kind === "view" ? "view" : "table") : hit.kind;
            const key = `${hit.kind}:${hit.catalog}.${hit.database}.${hit.name}.${hit.column ?? ""}`;
            return (
              <li key={key}>
                <Link to={pathOf("catalog", hit.catalog, hit.database, objectKind, hit.name)} data-tree-focus="">
                  <span className="badge">{hit.kind}</span>{" "}
                  {hit.kind === "column" ? (
                    <>
                      <span className="mono">
                        {hit.name}.{hit.column}
                      </span>{" "}
                      <span className="muted mono">{hit.data_type ?? "?"}</span>
                    </>
                  ) : (
                    <span className="mono">{hit.name}</span>
                  )}
                </Link>
                <div className="muted hit-where">
                  {hit.catalog}.{hit.database}
                </div>
              </li>
            );
          })}
        </ul>
      ) : null}
      <LoadMore next={next} loading={loading} onMore={found.loadMore} style="link" />
    </div>
  );
}

export function CatalogTree({ selection }: { selection: Selection }) {
  const list = usePaged<Catalog>("/catalogs", true);
  const refresh = useRefreshCatalog();
  const [q, setQ] = useState("");
  const [kind, setKind] = useState("all");
  const searching = q.trim().length > 0;
  const mayCreate = useMayCreateCatalog();

  return (
    <aside className="cat-tree" aria-label="Catalog browser">
      <div className="tree-tools">
        <label className="sr-only" htmlFor="cat-search">
          Search the catalog
        </label>
        <input
          id="cat-search"
          type="search"
          placeholder="Search tables, columns…"
          value={q}
          onChange={(event) => setQ(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === "Escape") setQ("");
          }}
        />
        <label className="sr-only" htmlFor="cat-search-kind">
          Search kind
        </label>
        <select id="cat-search-kind" value={kind} onChange={(event) => setKind(event.target.value)}>
          <option value="all">all</option>
          <option value="table">tables</option>
          <option value="view">views</option>
          <option value="function">functions</option>
          <option value="column">columns</option>
        </select>
        <button type="button" className="small" onClick={refresh} title="Reload the tree" aria-label="Refresh tree">
          ⟳
        </button>
      </div>
      {searching ? (
        <Search q={q.trim()} kind={kind} />
      ) : (
        <nav aria-label="Catalog tree" className="tree" onKeyDown={onTreeKey}>
          <ul className="tree-root">
            {list.items.map((catalog) => (
              <CatalogNode key={catalog.name} catalog={catalog} selection={selection} />
            ))}
            <ListStatus state={list} empty="No catalogs yet." depth={0} />
          </ul>
          {mayCreate ? (
            <div className="tree-footer">
              <Link to="/catalog?new=catalog">+ New catalog</Link>
            </div>
          ) : null}
        </nav>
      )}
    </aside>
  );
}

