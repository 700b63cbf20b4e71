// Types and small API helpers of the editor page (beyond src/api.ts).
import { ApiError } from "../../api";
import type { components } from "../../openapi/schema";
import type { ParameterMode } from "./sqlText";

export type { SavedQuery } from "../../api";

/** A tab as kept in localStorage (a cache of the server's tabs, plus what only this browser
 * keeps: its session, last job, parameters). */
export interface TabMeta {
  id: string;
  /** The server's version of the tab this browser last wrote or read; null: not on the server yet. */
  version?: number | null;
  /** The SQL the server had at `version`: an edit here differs from it (a reload keeps such an
   * edit when the server's newer version did not change the SQL). */
  serverSql?: string;
  title: string;
  sql: string;
  sessionId: string | null;
  savedQueryId: string | null;
  /** The last job this tab ran: its result shows again after a reload. */
  lastJobId?: string | null;
  /** A statement sent whose job is not known yet (the POST has not answered): a reload looks
   * for its job in the tab's session. */
  pendingRun?: PendingRun | null;
  /** The SQL as last saved or opened from its saved query (unsaved changes differ). */
  savedSql?: string | null;
  /** The tab's current catalog and database (its session's), kept on the server so that a tab
   * opened in another browser starts its session there. */
  catalog?: string | null;
  database?: string | null;
  /** Values typed for the `:name` markers of the SQL. */
  params?: Record<string, ParameterEntry>;
  /** The `row_limit` sent with a single statement (null: the session's limit). Above the
   * server's small-result limit a result is written while the job runs, and shows as it comes. */
  rowLimit?: number | null;
}

/** The row limits the toolbar offers beyond the session's (docs/workbench.md "First rows early"). */
export const ROW_LIMITS = [1_000_000, 10_000_000, 100_000_000] as const;

/** A stored row limit, when well-formed. */
export function cleanRowLimit(raw: unknown): number | null {
  return typeof raw === "number" && Number.isInteger(raw) && raw >= 1 ? raw : null;
}

/** A statement being sent: its text and when it was sent (browser clock, ISO). */
export interface PendingRun {
  sql: string;
  sentAt: string;
}

/** A parameter's input: the text typed and how it is sent. */
export interface ParameterEntry {
  value: string;
  mode: ParameterMode;
}

/** What to do when a tab opens (not persisted). */
export interface TabOpen {
  run?: boolean;
  catalog?: string;
  database?: string;
}


/** A temporary object of a session (generated type, with docs/api.md's enum for `kind` and the
 * fields the document leaves out: `system` functions, a view's `query`). */
export type TemporaryItem = Omit<components["schemas"]["TemporaryObjectOut"], "kind" | "shadows"> & {
  kind: "table" | "view" | "function";
  shadows: boolean;
  system?: boolean;
  query?: string;
};

/** A job's parameter values as the tab's inputs (to run it again with the same values). */
export function parameterEntries(values: Record<string, unknown> | undefined): Record<string, ParameterEntry> {
  const entries: Record<string, ParameterEntry> = {};
  for (const [name, value] of Object.entries(values ?? {})) {
    if (value === null) entries[name] = { value: "", mode: "null" };
    else if (typeof value === "number") entries[name] = { value: String(value), mode: "auto" };
    else entries[name] = { value: String(value), mode: "text" };
  }
  return entries;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (text: string): boolean => UUID.test(text);

/** A random UUID (v4): a tab's id, which the server takes as its own (crypto.randomUUID needs a
 * secure context; getRandomValues does not). */
export function newId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const errorText = (error: unknown): string =>
  error instanceof ApiError
    ? `${error.code}: ${error.message}`
    : error instanceof Error
      ? error.message
      : String(error);
