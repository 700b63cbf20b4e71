// The tab's toolbar: Run, Run all, Format, Save, and the session's catalog and database.
import type { Session } from "../../api";
import type { RunMode } from "./useStatementRunner";

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
  onSwitch,
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
  onSwitch(change: { current_catalog?: string; current_database?: string }): Promise<void>;
}) {
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
      {saveNote && <span className="muted small-text" role="status">{saveNote}</span>}
      <span className="toolbar-spacer" />
      <label className="inline-field">
        <span>Catalog</span>
        <select
          aria-label="Current catalog"
          value={session?.current_catalog ?? ""}
          onChange={(event) => void onSwitch({ current_catalog: event.target.value })}
        >
          {!session?.current_catalog && <option value="">{session ? "—" : "(default)"}</option>}
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
    </div>
  );
}
