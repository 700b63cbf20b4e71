// Editor tabs kept on the server (docs/api.md "Editor tabs"): what the browser has against what
// the server last acknowledged, as the writes that bring the server up to date. Pure: the hook
// (useServerTabs) sends them one at a time.
import type { components } from "../../openapi/schema";
import { newId, type TabMeta } from "./types";

export type ServerTab = components["schemas"]["EditorTabOut"];
export type ServerTabs = components["schemas"]["EditorTabListOut"];

/** The fields of a tab the server keeps (the rest — session, last job, parameters — stay in this
 * browser). */
export interface Synced {
  title: string;
  sql: string;
  position: number;
  savedQueryId: string | null;
  catalog: string | null;
  database: string | null;
}

const SYNCED: (keyof Synced)[] = ["title", "sql", "position", "savedQueryId", "catalog", "database"];

/** What the server has of a tab, as last acknowledged. */
export interface Known extends Synced {
  version: number;
}

export type Op =
  | { kind: "create"; id: string; body: Synced & { active: boolean } }
  | { kind: "patch"; id: string; version: number; changes: Partial<Synced> }
  | { kind: "delete"; id: string }
  | { kind: "activate"; id: string };

export function knownOf(tab: ServerTab): Known {
  return {
    title: tab.title,
    sql: tab.sql,
    position: tab.position,
    savedQueryId: tab.saved_query_id,
    catalog: tab.catalog,
    database: tab.database,
    version: tab.version,
  };
}

/** The writes that make the server's tabs what the browser has: creates (in order), changed
 * fields, deletes, then the active tab. */
export function plan(
  tabs: TabMeta[],
  active: string,
  known: ReadonlyMap<string, Known>,
  knownActive: string | null,
): Op[] {
  const ops: Op[] = [];
  tabs.forEach((tab, position) => {
    const synced: Synced = {
      title: tab.title,
      sql: tab.sql,
      position,
      savedQueryId: tab.savedQueryId,
      catalog: tab.catalog ?? null,
      database: tab.database ?? null,
    };
    const base = known.get(tab.id);
    if (!base) {
      ops.push({ kind: "create", id: tab.id, body: { ...synced, active: tab.id === active } });
      return;
    }
    const changes: Partial<Synced> = {};
    for (const field of SYNCED) if (base[field] !== synced[field]) Object.assign(changes, { [field]: synced[field] });
    if (Object.keys(changes).length > 0) ops.push({ kind: "patch", id: tab.id, version: base.version, changes });
  });
  const here = new Set(tabs.map((tab) => tab.id));
  for (const id of known.keys()) if (!here.has(id)) ops.push({ kind: "delete", id });
  if (active !== knownActive && known.has(active) && here.has(active)) ops.push({ kind: "activate", id: active });
  return ops;
}

/** One op as a stable text: an op refused for good is not sent again until it changes. */
export const opKey = (op: Op): string => JSON.stringify(op);

/** The tabs to show once the server's list arrives, from it and this browser's cache: the
 * server's tabs in its order, each with what only this browser keeps (session, last job…); a
 * cached tab's own text where it was edited here on the version the server still has (a change
 * not sent before a reload); cached tabs the server never had (made here, not yet sent) after
 * them (an empty one only when the server has none). Cached tabs the server had and no longer
 * has were closed elsewhere: gone. */
export function reconcile(
  cached: { tabs: TabMeta[]; active: string },
  server: ServerTabs,
): { tabs: TabMeta[]; active: string; known: Map<string, Known> } {
  const byId = new Map(cached.tabs.map((tab) => [tab.id, tab]));
  const known = new Map<string, Known>();
  const copies: TabMeta[] = [];
  const tabs: TabMeta[] = server.items.map((item) => {
    known.set(item.id, knownOf(item));
    const mine = byId.get(item.id);
    const fromServer: TabMeta = {
      id: item.id,
      title: item.title,
      sql: item.sql,
      sessionId: null,
      savedQueryId: item.saved_query_id,
      catalog: item.catalog,
      database: item.database,
      version: item.version,
    };
    if (!mine) return { ...fromServer, serverSql: item.sql };
    const unsent = mine.version === item.version;
    const { title, sql, savedQueryId, catalog, database } = fromServer;
    // SQL edited here on an older version: kept when the server's newer versions left the SQL as
    // it was (they changed the title, the database…); both changed: the server's, and ours in a
    // tab beside it.
    const editedHere = mine.serverSql !== undefined && mine.sql !== mine.serverSql;
    const keepMine = unsent || (editedHere && item.sql === mine.serverSql);
    if (!unsent && editedHere && !keepMine && mine.sql.trim() !== "" && mine.sql !== item.sql)
      copies.push({ ...mine, id: newId(), title: `${item.title} (this window)`.slice(0, 200), version: null, sessionId: null });
    return {
      ...mine,
      ...(unsent ? {} : { title, savedQueryId, catalog, database }),
      sql: keepMine ? mine.sql : sql,
      version: item.version,
      serverSql: item.sql,
    };
  });
  tabs.push(...copies);
  for (const tab of cached.tabs) {
    const unsent = !known.has(tab.id) && (tab.version === undefined || tab.version === null);
    // An empty unsent tab is the one a first paint made up: the server's tabs take its place.
    const blank = tab.sql.trim() === "" && !tab.savedQueryId;
    if (unsent && !(blank && server.items.length > 0)) tabs.push(tab);
  }
  const ids = new Set(tabs.map((tab) => tab.id));
  const active =
    server.active && ids.has(server.active)
      ? server.active
      : ids.has(cached.active)
        ? cached.active
        : (tabs[0]?.id ?? "");
  return { tabs, active, known };
}
