// Types and small API helpers of the editor page (beyond src/api.ts).
import { ApiError } from "../../api";
import type { components } from "../../openapi/schema";
import type { ParameterMode } from "./sqlText";

export type { SavedQuery } from "../../api";

/** A tab as kept in localStorage. */
export interface TabMeta {
  id: string;
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
  /** Values typed for the `:name` markers of the SQL. */
  params?: Record<string, ParameterEntry>;
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

export const newId = (): string =>
  Math.random().toString(36).slice(2, 10) + Date.now().toString(36).slice(-4);

export const errorText = (error: unknown): string =>
  error instanceof ApiError
    ? `${error.code}: ${error.message}`
    : error instanceof Error
      ? error.message
      : String(error);
