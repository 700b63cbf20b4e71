// The tab's toolbar: Run, Run all, Format, Save, and the session's catalog and database.
import type { Session } from "../../api";
import { formatCount } from "../../format";
import { ROW_LIMITS } from "./types";
import type { StartedIn } from "./tabSession";
import type { RunMode } from "./useStatementRunner";

const STARTED: Record<StartedIn, string> = {
  requested: "",
  last_used: "Opened where you last worked",
  user_default: "Opened in your default catalog",
  server_default: "Opened in the server's default catalog",
  personal: "Opened in your own catalog",
  none: "",
};

export function EditorToolbar({
  running,
  savedQueryId,
  saveNote,
  session,
  catalogs,
  databases,
  onRun,
  onFormat,
  onSave,
  onSaveAs,
  onSwitch,
  startedIn,
  whereNote,
  onMakeDefault,
  rowLimit,
  onRowLimit,
}: {
  running: boolean;
  savedQueryId: string | null;
  saveNote: string | null;
  session: Session | null;
  catalogs: string[];
  databases: string[];
  onRun(mode: RunMode): void;
  onFormat(): void;
  onSave(): void;
  onSaveAs(): void;
  onSwitch(change: { current_catalog?: string; current_database?: string }): Promise<void>;
  startedIn: StartedIn | null;
  whereNote: string | null;
  onMakeDefault(): void;
  /** The row limit sent with a single statement (null: the session's). */
  rowLimit: number | null;
  onRowLimit(rowLimit: number | null): void;
}) {
  const started = startedIn ? STARTED[startedIn] : "";
  const nowhere = !!session && !session.current_catalog;
  return (
    <div
      className="toolbar editor-toolbar"
      onKeyDown={(event) => {
        if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
          event.preventDefault();
          onRun(event.shiftKey ? "all" : "statement");
        }
      }}
    >
      <button type="button" className="primary" onClick={() => onRun("statement")} disabled={running} title="Run the statement at the cursor or the selection (Ctrl+Enter)">
        Run
      </button>
      <button type="button" onClick={() => onRun("all")} disabled={running} title="Run the whole script (Ctrl+Shift+Enter)">
        Run all
      </button>
      <button type="button" onClick={onFormat} title="Format (Shift+Alt+F)">
        Format
      </button>
      <button type="button" onClick={onSave} title={savedQueryId ? "Update the saved query (Ctrl+S)" : "Save as a saved query (Ctrl+S)"}>
        {savedQueryId ? "Save" : "Save…"}
      </button>
      {savedQueryId && (
        <button type="button" onClick={onSaveAs} title="Save a copy under another name; the tab follows the copy">
          Save as…
        </button>
      )}
      <label className="inline-field" title="The most rows a statement's result keeps. Above the session's limit the result is written while the query runs, and its first rows show as they come.">
        <span>Rows</span>
        <select
          aria-label="Row limit"
          value={rowLimit ?? ""}
          onChange={(event) => onRowLimit(event.target.value ? Number(event.target.value) : null)}
        >
          <option value="">session limit</option>
          {rowLimit !== null && !(ROW_LIMITS as readonly number[]).includes(rowLimit) && (
            <option value={rowLimit}>{formatCount(rowLimit)}</option>
          )}
          {ROW_LIMITS.map((limit) => (
            <option key={limit} value={limit}>
              {formatCount(limit)}
            </option>
          ))}
        </select>
      </label>
      {saveNote && <span className="muted small-text" role="status">{saveNote}</span>}
      <span className="toolbar-spacer" />
      {nowhere && (
        <span className="where-note warning" role="status" data-testid="where-note">
          No current catalog: choose one
        </span>
      )}
      {!nowhere && (whereNote || started) && (
        <span className="where-note muted small-text" data-testid="where-note">
          {whereNote ?? started}
        </span>
      )}
      <label className="inline-field">
        <span>Catalog</span>
        <select
          aria-label="Current catalog"
          value={session?.current_catalog ?? ""}
          onChange={(event) => void onSwitch({ current_catalog: event.target.value })}
        >
          {!session?.current_catalog && <option value="">{session ? "— choose —" : "…"}</option>}
          {session?.current_catalog && !catalogs.includes(session.current_catalog) && (
            <option value={session.current_catalog}>{session.current_catalog}</option>
          )}
          {catalogs.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </label>
      <label className="inline-field">
        <span>Database</span>
        <select
          aria-label="Current database"
          value={session?.current_database ?? ""}
          disabled={!session?.current_catalog}
          onChange={(event) => void onSwitch({ current_database: event.target.value })}
        >
          {!session?.current_database && <option value="">—</option>}
          {session?.current_database && !databases.includes(session.current_database) && (
            <option value={session.current_database}>{session.current_database}</option>
          )}
          {databases.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </label>
      <button
        type="button"
        className="small"
        disabled={!session?.current_catalog}
        onClick={onMakeDefault}
        title="New tabs start here when the catalog you last used is gone"
      >
        Make default
      </button>
    </div>
  );
}
