// The schema panel beside the editor: a catalog's databases, their tables and views, and each
// one's columns with their types, read through the catalog API's list queries (the same cache
// as the catalog pages). Clicking a name inserts it at the cursor, quoted where needed and as
// short as the tab's current catalog and database allow.
import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { enc, type Database, type Page, type Session, type Table } from "../../api";
import { apiQuery } from "../../data/queries";
import { errorText } from "./types";

/** A name as SQL: backticks (doubled inside) unless it is a plain identifier. */
export function sqlName(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : "`" + name.replace(/`/g, "``") + "`";
}

/** The shortest path that names `catalog.database.name` from the session's place. */
export function relativePath(session: Session | null, catalog: string, database: string, name: string): string {
  const same = (a: string | null | undefined, b: string) => !!a && a.toLowerCase() === b.toLowerCase();
  if (same(session?.current_catalog, catalog) && same(session?.current_database, database)) return sqlName(name);
  if (same(session?.current_catalog, catalog)) return `${sqlName(database)}.${sqlName(name)}`;
  return [catalog, database, name].map(sqlName).join(".");
}

function Relation({
  session,
  catalog,
  database,
  table,
  onInsert,
}: {
  session: Session | null;
  catalog: string;
  database: string;
  table: Table;
  onInsert(text: string): void;
}) {
  const [open, setOpen] = useState(false);
  const columns = (table.resolved_schema ?? table.schema)?.columns ?? [];
  return (
    <li className="schema-relation">
      <div className="schema-row">
        <button type="button" className="schema-toggle" aria-expanded={open} aria-label={`Columns of ${table.name}`} onClick={() => setOpen(!open)}>
          {open ? "▾" : "▸"}
        </button>
        <button
          type="button"
          className="schema-name"
          title={`Insert ${relativePath(session, catalog, database, table.name)}`}
          onClick={() => onInsert(relativePath(session, catalog, database, table.name))}
        >
          {table.name}
        </button>
        <span className="badge">{table.kind}</span>
      </div>
      {open && (
        <ul className="schema-columns">
          {columns.map((column) => (
            <li key={column.name} className="schema-row">
              <button type="button" className="schema-name" title={`Insert ${sqlName(column.name)}`} onClick={() => onInsert(sqlName(column.name))}>
                {column.name}
              </button>
              <span className="mono muted schema-type">{column.data_type ?? column.kind}</span>
            </li>
          ))}
          {columns.length === 0 && <li className="muted">No columns yet</li>}
        </ul>
      )}
    </li>
  );
}

function DatabaseNode({
  session,
  catalog,
  database,
  onInsert,
}: {
  session: Session | null;
  catalog: string;
  database: string;
  onInsert(text: string): void;
}) {
  const current = session?.current_catalog === catalog && session?.current_database === database;
  const [open, setOpen] = useState(current);
  const base = `/catalogs/${enc(catalog)}/databases/${enc(database)}`;
  const tables = useQuery({ ...apiQuery<Page<Table>>(`${base}/tables?page_size=200`), enabled: open });
  const views = useQuery({ ...apiQuery<Page<Table>>(`${base}/views?page_size=200`), enabled: open });
  const items = [...(tables.data?.items ?? []), ...(views.data?.items ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  const error = tables.error ?? views.error;
  return (
    <li className="schema-database" data-testid="schema-database">
      <div className="schema-row">
        <button type="button" className="schema-toggle" aria-expanded={open} aria-label={`Tables of ${database}`} onClick={() => setOpen(!open)}>
          {open ? "▾" : "▸"}
        </button>
        <span className={current ? "schema-db current" : "schema-db"}>{database}</span>
      </div>
      {open && (
        <ul className="schema-relations">
          {error && <li className="error">{errorText(error)}</li>}
          {(tables.isPending || views.isPending) && !error && <li className="muted">Loading…</li>}
          {items.map((table) => (
            <Relation key={`${table.kind}:${table.name}`} session={session} catalog={catalog} database={database} table={table} onInsert={onInsert} />
          ))}
          {!tables.isPending && !views.isPending && items.length === 0 && !error && <li className="muted">No tables or views</li>}
        </ul>
      )}
    </li>
  );
}

export function SchemaPanel({
  session,
  catalogs,
  onInsert,
}: {
  session: Session | null;
  catalogs: string[];
  onInsert(text: string): void;
}) {
  const [picked, setPicked] = useState<string | null>(null);
  const catalog = picked ?? session?.current_catalog ?? null;
  const databases = useQuery({
    ...apiQuery<Page<Database>>(`/catalogs/${enc(catalog ?? "")}/databases?page_size=1000`),
    enabled: !!catalog,
  });
  return (
    <div className="panel-body schema-panel" data-testid="schema-panel">
      <label className="inline-field">
        <span>Catalog</span>
        <select aria-label="Schema catalog" value={catalog ?? ""} onChange={(event) => setPicked(event.target.value || null)}>
          {!catalog && <option value="">— choose —</option>}
          {catalogs.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </label>
      {databases.error && <div className="error">{errorText(databases.error)}</div>}
      {catalog && (
        <ul className="schema-tree">
          {(databases.data?.items ?? []).map((database) => (
            <DatabaseNode key={`${catalog}.${database.name}`} session={session} catalog={catalog} database={database.name} onInsert={onInsert} />
          ))}
        </ul>
      )}
      <p className="muted small-text">Click a name to insert it at the cursor.</p>
    </div>
  );
}
