// One editor tab: its session (useTabSession), toolbar, the editor, the run (useStatementRunner:
// progress, elapsed, Cancel, errors marked in the text, the result) and the side panel
// (Session / History).
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { EditorSelection } from "@codemirror/state";
import type { EditorView } from "@codemirror/view";
import { ApiError, enc, patch } from "../../api";
import { CompletionCache, type CompletionHost } from "./completion";
import { EditorToolbar } from "./EditorToolbar";
import { HistoryPanel } from "./HistoryPanel";
import { RunArea } from "./RunArea";
import { SaveDialog } from "./SaveDialog";
import { SessionPanel } from "./SessionPanel";
import { SqlEditor } from "./SqlEditor";
import { mapCursorThroughFormat } from "./sqlText";
import { useTabSession } from "./tabSession";
import { errorText, type SavedQuery, type TabMeta, type TabOpen } from "./types";
import { useStatementRunner } from "./useStatementRunner";

export function TabPane({
  tab,
  visible,
  open,
  onUpdate,
  onOpenTab,
  historyKey,
  onJobDone,
}: {
  tab: TabMeta;
  /** This tab is the active one and the editor page shows. */
  visible: boolean;
  open: TabOpen | undefined;
  onUpdate(id: string, change: Partial<TabMeta>): void;
  onOpenTab(sql: string, title?: string): void;
  historyKey: number;
  onJobDone(): void;
}) {
  const viewRef = useRef<EditorView | null>(null);
  const cache = useMemo(() => new CompletionCache(), []);
  const [side, setSide] = useState<"session" | "history">("session");
  const [refreshKey, setRefreshKey] = useState(0);
  // The SQL being saved as a new saved query (the Save dialog is open), or null.
  const [saving, setSaving] = useState<string | null>(null);
  const [saveNote, setSaveNote] = useState<string | null>(null);
  const tabRef = useRef(tab);
  useEffect(() => {
    tabRef.current = tab;
  });

  const tabId = tab.id;
  const onSessionId = useCallback((sessionId: string | null) => onUpdate(tabId, { sessionId }), [onUpdate, tabId]);
  const { session, sessionError, catalogs, databases, ensureSession, forgetSession, refreshSession, switchTo } =
    useTabSession({ initialId: tab.sessionId, open, visible, onSessionId });

  const host: CompletionHost = useMemo(
    () => ({ session: () => ensureSession().then((found) => found.id), cache }),
    [ensureSession, cache],
  );

  // After each run: re-read the session (USE, SET), refresh the panels and caches.
  const afterRun = useCallback(async () => {
    cache.clear();
    const fresh = await refreshSession();
    setRefreshKey((key) => key + 1);
    onJobDone();
    return fresh;
  }, [cache, refreshSession, onJobDone]);
  const runner = useStatementRunner({ viewRef, ensureSession, forgetSession, afterRun });
  const { execute, fail } = runner;

  const switchAndRefresh = async (change: { current_catalog?: string; current_database?: string }) => {
    await switchTo(change);
    cache.clear();
    setRefreshKey((key) => key + 1);
  };

  // Focus the editor when the tab becomes visible.
  useEffect(() => {
    if (!visible) return;
    const view = viewRef.current;
    if (view) {
      view.requestMeasure();
      view.focus();
    }
  }, [visible]);

  const format = useCallback(async () => {
    const view = viewRef.current;
    if (!view) return;
    const before = view.state.doc.toString();
    let after: string;
    try {
      // sql-formatter is most of the bundle: loaded on the first Format only.
      const { format: formatSql } = await import("sql-formatter");
      after = formatSql(before, { language: "spark", keywordCase: "preserve" });
    } catch (error) {
      fail(`Cannot format: ${errorText(error)}`);
      return;
    }
    // Typed on while the formatter loaded: leave the new text alone.
    if (after === before || view.state.doc.toString() !== before) return;
    const cursor = mapCursorThroughFormat(before, after, view.state.selection.main.head);
    view.dispatch({
      changes: { from: 0, to: before.length, insert: after },
      selection: EditorSelection.cursor(Math.min(cursor, after.length)),
      scrollIntoView: true,
    });
    view.focus();
  }, [fail]);

  const saveQuery = useCallback(async () => {
    const current = tabRef.current;
    const sql = viewRef.current?.state.doc.toString() ?? current.sql;
    if (!current.savedQueryId) {
      setSaving(sql);
      return;
    }
    try {
      await patch<SavedQuery>(`/saved-queries/${enc(current.savedQueryId)}`, { sql });
      setSaveNote(`Saved at ${new Date().toLocaleTimeString()}`);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        onUpdate(current.id, { savedQueryId: null });
        setSaving(sql);
      } else setSaveNote(`Not saved: ${errorText(error)}`);
    }
  }, [onUpdate]);

  const commands = {
    run: () => void execute("statement"),
    runAll: () => void execute("all"),
    format,
    save: () => void saveQuery(),
  };

  // Opened with `run`: run at once (once the view exists).
  const autoRun = useRef(open?.run ?? false);
  useEffect(() => {
    if (autoRun.current && viewRef.current) {
      autoRun.current = false;
      void execute("all");
    }
  }, [execute]);

  // The text is written back to the tab (and localStorage) after a short pause in typing.
  const docTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const onDocChange = useCallback(
    (doc: string) => {
      clearTimeout(docTimer.current);
      docTimer.current = setTimeout(() => onUpdate(tabId, { sql: doc }), 250);
    },
    [onUpdate, tabId],
  );

  const replaceDoc = (sql: string) => {
    const view = viewRef.current;
    if (!view) return;
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: sql }, selection: EditorSelection.cursor(sql.length) });
    view.focus();
  };

  return (
    <div className="tab-pane" hidden={!visible} data-testid="tab-pane" data-tab-id={tab.id}>
      <div className="editor-main">
        <EditorToolbar
          running={runner.running}
          savedQueryId={tab.savedQueryId}
          saveNote={saveNote}
          session={session}
          catalogs={catalogs}
          databases={databases}
          onRun={(mode) => void execute(mode)}
          onFormat={() => void format()}
          onSave={() => void saveQuery()}
          onSwitch={switchAndRefresh}
        />
        {sessionError && <div className="alert danger slim">{sessionError}</div>}
        <div className="editor-frame">
          <SqlEditor
            initialDoc={tab.sql}
            host={host}
            commands={commands}
            onDocChange={onDocChange}
            onView={(view) => {
              viewRef.current = view;
            }}
          />
        </div>
        <RunArea
          run={runner.run}
          running={runner.running}
          picked={runner.picked}
          elapsed={runner.elapsed}
          onPick={runner.setPicked}
          onCancel={() => void runner.cancel()}
        />
      </div>
      <aside className="side-panel" aria-label="Side panel">
        <div className="side-tabs" role="tablist">
          <button type="button" role="tab" aria-selected={side === "session"} onClick={() => setSide("session")}>
            Session
          </button>
          <button type="button" role="tab" aria-selected={side === "history"} onClick={() => setSide("history")}>
            History
          </button>
        </div>
        {side === "session" ? (
          <SessionPanel
            session={session}
            sessionError={sessionError}
            refreshKey={refreshKey}
            onChanged={() => {
              cache.clear();
            }}
          />
        ) : (
          <HistoryPanel
            refreshKey={historyKey + refreshKey}
            onOpen={(found) => onOpenTab(found.sql)}
            onOpenHere={(found) => replaceDoc(found.sql)}
          />
        )}
      </aside>
      {saving !== null && (
        <SaveDialog
          sql={saving}
          initialName={tab.title}
          onClose={() => {
            setSaving(null);
            viewRef.current?.focus();
          }}
          onSaved={(saved) => {
            setSaving(null);
            onUpdate(tab.id, { savedQueryId: saved.id, title: saved.name });
            setSaveNote(`Saved as “${saved.name}”`);
            viewRef.current?.focus();
          }}
        />
      )}
    </div>
  );
}
