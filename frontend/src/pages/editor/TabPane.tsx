// One editor tab: its session (useTabSession), toolbar, the editor, the run (useStatementRunner:
// progress, elapsed, Cancel, errors marked in the text, the result) and the side panel
// (Session / History).
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useQueryClient } from "@tanstack/react-query";
import { invalidate } from "../../data/queries";
import { formatClock } from "../../format";
import { EditorSelection } from "@codemirror/state";
import type { EditorView } from "@codemirror/view";
import { ApiError, enc, get, patch, type Job, type Page, type Workspace } from "../../api";
import { CompletionCache, type CompletionHost } from "./completion";
import { EditorToolbar } from "./EditorToolbar";
import { HistoryPanel } from "./HistoryPanel";
import { RunArea } from "./RunArea";
import { SaveDialog } from "./SaveDialog";
import { SchemaPanel } from "./SchemaPanel";
import { SessionPanel } from "./SessionPanel";
import { SqlEditor } from "./SqlEditor";
import { Splitter } from "./Splitter";
import type { EditorLayout } from "./layout";
import { askPermissionOnce, jobEnded, LONG_RUN_MS, markSeen } from "./notify";
import { ParameterBar } from "./ParameterBar";
import { registerEditor } from "./editorText";
import { mapCursorThroughFormat, parameterNames, parameterValue } from "./sqlText";
import { useTabSession } from "./tabSession";
import {
  errorText,
  parameterEntries,
  type ParameterEntry,
  type PendingRun,
  type SavedQuery,
  type TabMeta,
  type TabOpen,
} from "./types";
import { useStatementRunner } from "./useStatementRunner";

/** How far before the browser's send time a job may have been created (clocks differ). */
const PENDING_SLACK_MS = 5_000;

/** The job of a statement sent from this tab whose answer was lost (a reload): the newest of
 * the session's jobs created since it was sent with the same text, or null. */
async function findSentJob(sessionId: string, run: PendingRun): Promise<Job | null> {
  const since = new Date(Date.parse(run.sentAt) - PENDING_SLACK_MS).toISOString();
  const page = await get<Page<Job>>(`/jobs?session=${enc(sessionId)}&created_after=${enc(since)}&page_size=20`);
  return page.items.find((job) => job.sql === run.sql) ?? null;
}

export function TabPane({
  tab,
  visible,
  open,
  onUpdate,
  onOpenTab,
  historyKey,
  onJobDone,
  layout,
  onLayout,
}: {
  tab: TabMeta;
  /** This tab is the active one and the editor page shows. */
  visible: boolean;
  open: TabOpen | undefined;
  onUpdate(id: string, change: Partial<TabMeta>): void;
  onOpenTab(sql: string, title?: string, params?: Record<string, ParameterEntry>): void;
  historyKey: number;
  onJobDone(): void;
  /** The user's layout (the editor's height, the side panel), the same in every tab. */
  layout: EditorLayout;
  onLayout(change: Partial<EditorLayout>): void;
}) {
  const client = useQueryClient();
  const viewRef = useRef<EditorView | null>(null);
  const cache = useMemo(() => new CompletionCache(), []);
  const [side, setSide] = useState<"session" | "history" | "schema">("session");
  const sideOpen = layout.sideOpen;
  const frameRef = useRef<HTMLDivElement | null>(null);
  const [refreshKey, setRefreshKey] = useState(0);
  // The SQL being saved as a new saved query (the Save dialog is open), or null.
  const [saving, setSaving] = useState<string | null>(null);
  const [saveNote, setSaveNote] = useState<string | null>(null);
  const tabRef = useRef(tab);
  useEffect(() => {
    tabRef.current = tab;
  });

  const tabId = tab.id;
  const visibleRef = useRef(visible);
  useEffect(() => {
    visibleRef.current = visible;
    if (visible && !document.hidden) markSeen();
  }, [visible]);
  useEffect(() => {
    const back = () => {
      if (visibleRef.current && !document.hidden) markSeen();
    };
    document.addEventListener("visibilitychange", back);
    return () => document.removeEventListener("visibilitychange", back);
  }, []);
  const onSessionId = useCallback((sessionId: string | null) => onUpdate(tabId, { sessionId }), [onUpdate, tabId]);
  // A tab last used in another browser starts its session where it was there.
  const place = useMemo<TabOpen | undefined>(
    () => open ?? (tab.catalog ? { catalog: tab.catalog, database: tab.database ?? undefined } : undefined),
    [open, tab.catalog, tab.database],
  );
  const { session, startedIn, sessionError, catalogs, databases, ensureSession, forgetSession, refreshSession, switchTo } =
    useTabSession({ initialId: tab.sessionId, open: place, visible, onSessionId });
  // …and the tab keeps where its session is now (USE, the toolbar), for the server to keep.
  const sessionCatalog = session ? (session.current_catalog ?? null) : undefined;
  const sessionDatabase = session ? (session.current_database ?? null) : undefined;
  useEffect(() => {
    if (sessionCatalog === undefined || sessionDatabase === undefined) return;
    if (sessionCatalog !== (tab.catalog ?? null) || sessionDatabase !== (tab.database ?? null))
      onUpdate(tabId, { catalog: sessionCatalog, database: sessionDatabase });
  }, [sessionCatalog, sessionDatabase, tab.catalog, tab.database, onUpdate, tabId]);
  const [whereNote, setWhereNote] = useState<string | null>(null);
  const makeDefault = useCallback(async () => {
    if (!session?.current_catalog) return;
    try {
      await patch<Workspace>("/workspace", {
        default_catalog: session.current_catalog,
        ...(session.current_database ? { default_database: session.current_database } : {}),
      });
      setWhereNote(`Default: ${session.current_catalog}${session.current_database ? "." + session.current_database : ""}`);
    } catch (error) {
      setWhereNote(`Not set: ${errorText(error)}`);
    }
  }, [session]);

  const host: CompletionHost = useMemo(
    () => ({ session: () => ensureSession().then((found) => found.id), cache }),
    [ensureSession, cache],
  );

  // After each run: re-read the session (USE, SET), refresh the panels and caches.
  const afterRun = useCallback(async (last: Job | null) => {
    if (last) {
      onUpdate(tabId, { lastJobId: last.id });
      jobEnded(last, document.hidden || !visibleRef.current);
    }
    cache.clear();
    const fresh = await refreshSession();
    setRefreshKey((key) => key + 1);
    onJobDone();
    return fresh;
  }, [cache, refreshSession, onJobDone, onUpdate, tabId]);
  const parametersFor = useCallback((sql: string) => {
    const values = tabRef.current.params ?? {};
    const sent: Record<string, string | number | null> = {};
    for (const name of parameterNames(sql)) {
      const entry = values[name] ?? { value: "", mode: "auto" };
      sent[name] = parameterValue(entry.value, entry.mode);
    }
    return sent;
  }, []);
  // The tab keeps the job of its run as soon as the POST answers (a stream, a long query), so
  // that a reload follows that job instead of showing the run before it.
  const docTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const written = useRef(tab.sql); // the text this pane last wrote to the tab
  // A run also writes the text at once (not after the typing pause), so that a reload shows
  // the SQL that ran above its result.
  const onJob = useCallback(
    (job: Job | null, sent?: string) => {
      const change: Partial<TabMeta> = {
        lastJobId: job?.id ?? null,
        pendingRun: !job && sent !== undefined ? { sql: sent, sentAt: new Date().toISOString() } : null,
      };
      if (!job && viewRef.current) {
        clearTimeout(docTimer.current);
        change.sql = written.current = viewRef.current.state.doc.toString();
      }
      onUpdate(tabId, change);
    },
    [onUpdate, tabId],
  );
  const rowLimitFor = useCallback(() => tabRef.current.rowLimit ?? null, []);
  const runner = useStatementRunner({ viewRef, ensureSession, forgetSession, afterRun, parametersFor, rowLimitFor, onJob });
  const { execute, fail, restore } = runner;

  // A run that takes long: ask (once) whether its end may be notified.
  const longRun = runner.running && runner.elapsed >= LONG_RUN_MS;
  useEffect(() => {
    if (longRun) askPermissionOnce();
  }, [longRun]);

  // After a reload: the tab's last job shows again, read from the server (followed while it runs).
  const restoredJob = useRef(tab.lastJobId ?? null);
  const pendingRun = useRef(tab.lastJobId ? null : { run: tab.pendingRun ?? null, sessionId: tab.sessionId });
  useEffect(() => {
    const id = restoredJob.current;
    const pending = pendingRun.current;
    if (!visible) return;
    restoredJob.current = null;
    pendingRun.current = null;
    if (id) {
      get<Job>(`/jobs/${enc(id)}`)
        .then((job) => void restore(job))
        .catch(() => onUpdate(tabId, { lastJobId: null })); // gone: forget it
    } else if (pending?.run && pending.sessionId) {
      // Reloaded before the POST answered: its job is the session's newest with that text.
      findSentJob(pending.sessionId, pending.run)
        .then((job) => {
          onUpdate(tabId, { lastJobId: job?.id ?? null, pendingRun: null });
          if (job) void restore(job);
        })
        .catch(() => onUpdate(tabId, { pendingRun: null }));
    }
  }, [visible, restore, onUpdate, tabId]);

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
      onUpdate(current.id, { sql, savedSql: sql });
      setSaveNote(`Saved at ${formatClock(Date.now())}`);
      void invalidate(client, "saved-queries");
    } catch (error) {
      if (error instanceof ApiError && (error.status === 404 || error.status === 403)) {
        // Deleted meanwhile, or not yours: save a copy instead.
        onUpdate(current.id, { savedQueryId: null });
        setSaving(sql);
      } else setSaveNote(`Not saved: ${errorText(error)}`);
    }
  }, [onUpdate, client]);

  /** "Save as…": a new saved query (a copy), which the tab is linked to from then on. */
  const saveAs = useCallback(() => {
    setSaving(viewRef.current?.state.doc.toString() ?? tabRef.current.sql);
  }, []);

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

  // The unload flush reads the editor itself: its text reaches the tab only after the pause below.
  useEffect(() => registerEditor(tabId, () => viewRef.current?.state.doc.toString()), [tabId]);
  // The text is written back to the tab (and localStorage) after a short pause in typing.
  const onDocChange = useCallback(
    (doc: string) => {
      clearTimeout(docTimer.current);
      docTimer.current = setTimeout(() => {
        written.current = doc;
        onUpdate(tabId, { sql: doc });
      }, 250);
    },
    [onUpdate, tabId],
  );

  // Text that came from elsewhere (the server's tab, written in another window) replaces the
  // editor's; text this pane wrote itself does not (the editor may be ahead of it already).
  useEffect(() => {
    const view = viewRef.current;
    if (!view || tab.sql === written.current || tab.sql === view.state.doc.toString()) return;
    written.current = tab.sql;
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: tab.sql } });
  }, [tab.sql]);

  const markerNames = useMemo(() => parameterNames(tab.sql), [tab.sql]);
  const setParam = useCallback(
    (name: string, entry: ParameterEntry) =>
      onUpdate(tabId, { params: { ...(tabRef.current.params ?? {}), [name]: entry } }),
    [onUpdate, tabId],
  );

  const insertAtCursor = (text: string) => {
    const view = viewRef.current;
    if (!view) return;
    view.dispatch(view.state.replaceSelection(text));
    view.focus();
  };

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
          onSaveAs={saveAs}
          onSwitch={switchAndRefresh}
          startedIn={startedIn}
          whereNote={whereNote}
          onMakeDefault={() => void makeDefault()}
          rowLimit={tab.rowLimit ?? null}
          onRowLimit={(rowLimit) => onUpdate(tabId, { rowLimit })}
        />
        {sessionError && <div className="alert danger slim">{sessionError}</div>}
        <div className="editor-frame" id={`editor-frame-${tab.id}`} ref={frameRef} style={{ height: `${layout.editorPercent}%` }}>
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
        <Splitter
          percent={layout.editorPercent}
          onChange={(editorPercent) => onLayout({ editorPercent })}
          frameRef={frameRef}
          controls={`editor-frame-${tab.id}`}
        />
        <ParameterBar
          names={markerNames}
          values={tab.params ?? {}}
          onChange={setParam}
          onRun={() => void execute("statement")}
        />
        <RunArea
          run={runner.run}
          running={runner.running}
          picked={runner.picked}
          elapsed={runner.elapsed}
          onPick={runner.setPicked}
          onCancel={() => void runner.cancel()}
          savedQueryId={tab.savedQueryId}
          title={tab.title}
        />
      </div>
      {!sideOpen && (
        <button
          type="button"
          className="side-expand"
          aria-label="Show the side panel"
          title="Show the side panel"
          aria-expanded={false}
          aria-controls={`side-${tab.id}`}
          onClick={() => onLayout({ sideOpen: true })}
        >
          ⟨
        </button>
      )}
      <aside className="side-panel" id={`side-${tab.id}`} aria-label="Side panel" hidden={!sideOpen}>
        <div className="side-tabs" role="tablist">
          <button type="button" role="tab" aria-selected={side === "schema"} onClick={() => setSide("schema")}>
            Schema
          </button>
          <button type="button" role="tab" aria-selected={side === "session"} onClick={() => setSide("session")}>
            Session
          </button>
          <button type="button" role="tab" aria-selected={side === "history"} onClick={() => setSide("history")}>
            History
          </button>
          <button
            type="button"
            className="side-collapse"
            aria-label="Hide the side panel"
            title="Hide the side panel"
            aria-expanded={sideOpen}
            aria-controls={`side-${tab.id}`}
            onClick={() => onLayout({ sideOpen: false })}
          >
            ⟩
          </button>
        </div>
        {side === "schema" && <SchemaPanel session={session} catalogs={catalogs} onInsert={insertAtCursor} />}
        {side === "session" && (
          <SessionPanel
            session={session}
            sessionError={sessionError}
            refreshKey={refreshKey}
            onChanged={() => {
              cache.clear();
            }}
          />
        )}
        {side === "history" && (
          <HistoryPanel
            refreshKey={historyKey + refreshKey}
            onOpen={(found) => onOpenTab(found.sql, undefined, parameterEntries(found.parameters))}
            onOpenHere={(found) => {
              replaceDoc(found.sql);
              onUpdate(tabId, { params: { ...(tabRef.current.params ?? {}), ...parameterEntries(found.parameters) } });
            }}
          />
        )}
      </aside>
      {saving !== null && (
        <SaveDialog
          sql={saving}
          initialName={tab.savedQueryId ? `${tab.title} (copy)` : tab.title}
          onClose={() => {
            setSaving(null);
            viewRef.current?.focus();
          }}
          onSaved={(saved) => {
            setSaving(null);
            onUpdate(tab.id, { savedQueryId: saved.id, title: saved.name, savedSql: saved.sql });
            setSaveNote(`Saved as “${saved.name}”`);
            void invalidate(client, "saved-queries");
            viewRef.current?.focus();
          }}
        />
      )}
    </div>
  );
}
