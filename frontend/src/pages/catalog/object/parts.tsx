// Shared parts of the object pages (TablePage, ViewPage, FunctionPage): their shapes, the
// section tabs, the header, the loading state, and reading/dropping the object.
import { useCallback, useRef, useState, type ReactNode } from "react";
import { enc, type FunctionObject, type Schema, type Table } from "../../../api";
import { navigate, pathOf } from "../../../router";
import { openInEditor } from "../../../store";
import { Breadcrumbs, ErrorAlert, useCatalogQuery, useDelete, usePatch } from "../common";

export interface ObjectProps {
  catalog: string;
  database: string;
  name: string;
}

/** A table with what docs/api.md adds to its resolved schema (a JSON field in the document). */
export type TableInfo = Table & {
  resolved_schema: (Schema & { expressions_resolved?: boolean }) | null;
};

export type FunctionInfo = FunctionObject;

/** Who owns a table, view or function: `owner` (ADR 0011), else its creator (older servers). */
export function ownerOf(object: { owner?: string | null; created_by?: string | null }): string | null {
  return object.owner ?? object.created_by ?? null;
}

/** Said where the rows would be (sample data, statistics) to a user without SELECT. */
export function NoSelectNote({ what }: { what: "table" | "view" }) {
  return (
    <p className="muted cat-readonly" data-testid="no-select">
      You may see this {what} but not read its rows: that needs SELECT on it, its database or its catalog.
    </p>
  );
}

export function queryInEditor(path: string, title: string) {
  openInEditor({ sql: `SELECT * FROM ${path} LIMIT 100`, title, run: true });
  navigate("/editor");
}

export interface TabSpec {
  id: string;
  label: string;
  render: () => ReactNode;
}

export function Tabs({ tabs, initial }: { tabs: TabSpec[]; initial?: string }) {
  const [active, setActive] = useState(initial ?? tabs[0].id);
  const [visited, setVisited] = useState<Set<string>>(() => new Set([initial ?? tabs[0].id]));
  const refs = useRef<Record<string, HTMLButtonElement | null>>({});
  const select = (id: string) => {
    setActive(id);
    setVisited((old) => (old.has(id) ? old : new Set([...old, id])));
  };
  const onKey = (event: React.KeyboardEvent, index: number) => {
    let next = -1;
    if (event.key === "ArrowRight") next = (index + 1) % tabs.length;
    else if (event.key === "ArrowLeft") next = (index - 1 + tabs.length) % tabs.length;
    if (next < 0) return;
    event.preventDefault();
    select(tabs[next].id);
    refs.current[tabs[next].id]?.focus();
  };
  return (
    <div className="cat-tabs">
      <div role="tablist" aria-label="Sections" className="cat-tablist">
        {tabs.map((tab, index) => (
          <button
            key={tab.id}
            ref={(el) => {
              refs.current[tab.id] = el;
            }}
            type="button"
            role="tab"
            id={`tab-${tab.id}`}
            aria-selected={active === tab.id}
            aria-controls={`panel-${tab.id}`}
            tabIndex={active === tab.id ? 0 : -1}
            onClick={() => select(tab.id)}
            onKeyDown={(event) => onKey(event, index)}
          >
            {tab.label}
          </button>
        ))}
      </div>
      {tabs.map((tab) =>
        visited.has(tab.id) ? (
          <div
            key={tab.id}
            role="tabpanel"
            id={`panel-${tab.id}`}
            aria-labelledby={`tab-${tab.id}`}
            hidden={active !== tab.id}
            className="cat-panel"
          >
            {tab.render()}
          </div>
        ) : null,
      )}
    </div>
  );
}

export function Header({
  parts,
  kind,
  children,
  actions,
}: {
  parts: string[];
  kind: string;
  children?: ReactNode;
  actions: ReactNode;
}) {
  return (
    <>
      <Breadcrumbs parts={parts.slice(0, 2)} />
      <div className="cat-header">
        <h1 data-testid="object-name">
          <span className="badge info">{kind}</span> <span className="mono">{parts.join(".")}</span>
        </h1>
        {children}
        <div className="spacer" />
        {actions}
      </div>
    </>
  );
}

export function NotLoaded({ parts, error, what }: { parts: string[]; error: unknown; what: string }) {
  return (
    <div className="cat-main-inner">
      <Breadcrumbs parts={parts.slice(0, 2)} />
      {error ? <ErrorAlert error={error} /> : <p className="muted">Loading {what}…</p>}
    </div>
  );
}

export type ObjectKind = "tables" | "views" | "functions";

/** One catalog object: its URL, its data (polled while `poll` says so), saving and dropping. */
export function useObject<T>(
  { catalog, database, name }: ObjectProps,
  kind: ObjectKind,
  poll?: (data: T) => boolean,
) {
  const base = `/catalogs/${enc(catalog)}/databases/${enc(database)}/${kind}/${enc(name)}`;
  const info = useCatalogQuery<T>(base, poll);
  const save = usePatch<T>(base);
  const remove = useDelete();
  const drop = useCallback(async () => {
    await remove(base);
    navigate(pathOf("catalog", catalog, database));
  }, [remove, base, catalog, database]);
  return { base, info, save, drop };
}
