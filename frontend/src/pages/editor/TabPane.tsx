// One editor tab: its session (opened lazily), toolbar (catalog/database, Run, Run all,
// Format, Save), the editor, the running job (progress, elapsed, Cancel), errors marked in the
// text, the result, and the side panel (Session / History).
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { setDiagnostics } from "@codemirror/lint";
import { EditorSelection } from "@codemirror/state";
import type { EditorView } from "@codemirror/view";
import {
  ApiError,
  enc,
  get,
  patch,
  post,
  type Catalog,
  type Database,
  type Job,
  type JobEvent,
  type Page,
  type ResultPage,
  type Session,
} from "../../api";
import { JobProgress, JobStatusBadge } from "../../components/jobs/JobProgress";
import { pollJob } from "../../components/jobs/poll";
import { ResultView } from "../../components/results/ResultView";
import { Link } from "../../router";
import { CompletionCache, type CompletionHost } from "./completion";
import { HistoryPanel } from "./HistoryPanel";
import { SaveDialog } from "./SaveDialog";
import { SessionPanel } from "./SessionPanel";
import { SqlEditor } from "./SqlEditor";
import { mapCursorThroughFormat, mapErrorPosition, splitStatements, statementAt } from "./sqlText";
import {
  errorText,
  formatElapsed,
  type SavedQuery,
  type ScriptJob,
  type TabMeta,
  type TabOpen,
} from "./types";

interface RunState {
  job: Job | null;
  /** 1-based statement number and count, for scripts. */
  step: [number, number] | null;
  startedAt: number;
  endedAt: number | null;
  summary: string | null;
  requestError: string | null;
  /** The jobs of this run that have ended, in order (a script has several). */
  done: Job[];
}

const SENTENCE_COLUMNS = new Set(["result", "existed"]);

async function summaryOf(job: Job, session: Session | null): Promise<string | null> {
  if (job.status !== "FINISHED") return null;
  const columns = job.result?.columns.map((column) => column.name) ?? [];
  if (job.kind === "use" && session)
    return `Now using ${session.current_catalog ?? "—"}.${session.current_database ?? "—"}`;
  if (["insert", "ctas", "statement_set"].includes(job.kind)) {
    const events = await get<Page<JobEvent>>(`/jobs/${enc(job.id)}/events?page_size=200`).catch(() => null);
    const written = (events?.items ?? [])
      .filter((event) => event.type === "data_committed" && event.detail && typeof event.detail === "object")
      .map((event) => event.detail as { table?: unknown; rows?: unknown });
    if (written.length > 0)
      return written
        .map((detail) => {
          const table = Array.isArray(detail.table) ? detail.table.join(".") : String(detail.table ?? "");
          return typeof detail.rows === "number" ? `${detail.rows} rows written to ${table}` : `Data written to ${table}`;
        })
        .join("; ");
  }
  if (columns.length > 0 && columns.every((name) => SENTENCE_COLUMNS.has(name)) && columns[0] === "result") {
    const page = await get<ResultPage>(`/jobs/${enc(job.id)}/result?page_size=1`).catch(() => null);
    const value = page?.rows[0]?.[0];
    if (typeof value === "string") return value;
  }
  if (job.result && job.kind === "query")
    return `${job.result.row_count} row${job.result.row_count === 1 ? "" : "s"}${job.result.truncated ? " (truncated)" : ""}`;
  if (!job.result) return `${job.kind.toUpperCase()} finished`;
  return null;
}

const WHERE_KEY = "tessera.editor.where";

/** New tabs start where the user last switched to (or in the first catalog there is). */
function rememberWhere(session: Session): void {
  if (!session.current_catalog) return;
  const where = { catalog: session.current_catalog, database: session.current_database };
  localStorage.setItem(WHERE_KEY, JSON.stringify(where));
}

async function createSession(catalog?: string, database?: string): Promise<Session> {
  if (catalog) {
    return post<Session>("/sessions", {
      current_catalog: catalog,
      ...(database ? { current_database: database } : {}),
    });
  }
  let where: { catalog?: string; database?: string | null } = {};
  try {
    where = JSON.parse(localStorage.getItem(WHERE_KEY) ?? "{}") ?? {};
  } catch {
    where = {};
  }
  if (where.catalog) {
    try {
      return await post<Session>("/sessions", {
        current_catalog: where.catalog,
        ...(where.database ? { current_database: where.database } : {}),
      });
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) throw error;
      localStorage.removeItem(WHERE_KEY); // that catalog or database is gone
    }
  }
  const first = await get<Page<{ name: string }>>("/catalogs?page_size=1");
  const name = first.items[0]?.name;
  return post<Session>("/sessions", name ? { current_catalog: name } : {});
}

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
  const sessionRef = useRef<Session | null>(null);
  const sessionIdRef = useRef<string | null>(tab.sessionId);
  const pendingSession = useRef<Promise<Session> | null>(null);
  const cache = useMemo(() => new CompletionCache(), []);
  const [session, setSessionState] = useState<Session | null>(null);
  const [sessionError, setSessionError] = useState<string | null>(null);
  const [catalogs, setCatalogs] = useState<string[] | null>(null);
  const [databases, setDatabases] = useState<string[] | null>(null);
  const [run, setRun] = useState<RunState | null>(null);
  const [picked, setPicked] = useState<number | null>(null);
  const [running, setRunning] = useState(false);
  const [now, setNow] = useState(Date.now());
  const [side, setSide] = useState<"session" | "history">("session");
  const [refreshKey, setRefreshKey] = useState(0);
  const [saving, setSaving] = useState(false);
  const [saveNote, setSaveNote] = useState<string | null>(null);
  const cancelRef = useRef<AbortController | null>(null);
  const tabRef = useRef(tab);
  tabRef.current = tab;

  const setSession = useCallback(
    (next: Session | null) => {
      sessionRef.current = next;
      setSessionState(next);
      const id = next?.id ?? null;
      if (id !== sessionIdRef.current) {
        sessionIdRef.current = id;
        onUpdate(tab.id, { sessionId: id });
      }
    },
    [onUpdate, tab.id],
  );

  /** The tab's session, reusing a persisted one and replacing it when it answers 404. */
  const ensureSession = useCallback(async (): Promise<Session> => {
    if (sessionRef.current) return sessionRef.current;
    if (!pendingSession.current) {
      pendingSession.current = (async () => {
        const known = sessionIdRef.current;
        if (known) {
          try {
            const found = await get<Session>(`/sessions/${enc(known)}`);
            setSession(found);
            return found;
          } catch (error) {
            if (!(error instanceof ApiError && error.status === 404)) throw error;
          }
        }
        const created = await createSession(open?.catalog, open?.database);
        setSession(created);
        setSessionError(null);
        return created;
      })().finally(() => {
        pendingSession.current = null;
      });
    }
    return pendingSession.current;
  }, [open, setSession]);

  const host: CompletionHost = useMemo(
    () => ({ session: () => ensureSession().then((found) => found.id), cache }),
    [ensureSession, cache],
  );

  // A persisted session: show its catalog/database (a 404 is replaced lazily later).
  useEffect(() => {
    const known = tab.sessionId;
    if (!known || sessionRef.current) return;
    get<Session>(`/sessions/${enc(known)}`)
      .then((found) => {
        if (!sessionRef.current) setSession(found);
      })
      .catch((error: unknown) => {
        if (error instanceof ApiError && error.status === 404) setSession(null);
        else setSessionError(errorText(error));
      });
    // only once, on mount
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  // Catalog and database lists for the toolbar (loaded when the tab first shows).
  useEffect(() => {
    if (!visible || catalogs !== null) return;
    get<Page<Catalog>>("/catalogs?page_size=1000")
      .then((page) => setCatalogs(page.items.map((catalog) => catalog.name)))
      .catch((error: unknown) => {
        setCatalogs([]);
        setSessionError(errorText(error));
      });
  }, [visible, catalogs]);
  const currentCatalog = session?.current_catalog ?? null;
  useEffect(() => {
    setDatabases(null);
    if (!currentCatalog) return;
    let live = true;
    get<Page<Database>>(`/catalogs/${enc(currentCatalog)}/databases?page_size=1000`)
      .then((page) => live && setDatabases(page.items.map((database) => database.name)))
      .catch(() => live && setDatabases([]));
    return () => {
      live = false;
    };
  }, [currentCatalog, refreshKey]);

  // Focus the editor when the tab becomes visible.
  useEffect(() => {
    if (!visible) return;
    const view = viewRef.current;
    if (view) {
      view.requestMeasure();
      view.focus();
    }
  }, [visible]);

  // Elapsed time ticker while running.
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => setNow(Date.now()), 200);
    return () => clearInterval(timer);
  }, [running]);

  const switchTo = async (change: { current_catalog?: string; current_database?: string }) => {
    try {
      const current = await ensureSession();
      const updated = await patch<Session>(`/sessions/${enc(current.id)}`, change);
      rememberWhere(updated);
      setSession(updated);
      setSessionError(null);
      cache.clear();
      setRefreshKey((key) => key + 1);
    } catch (error) {
      setSessionError(errorText(error));
    }
  };

  const markError = (job: Job, sent: string, base: number, docAtRun: string) => {
    const view = viewRef.current;
    const details = job.error?.details as { line?: unknown; column?: unknown } | undefined;
    if (!view || !details || typeof details.line !== "number") return;
    if (view.state.doc.toString() !== docAtRun) return;
    const column = typeof details.column === "number" ? details.column : 1;
    const doc = view.state.doc;
    let from = Math.min(mapErrorPosition(sent, base, details.line, column), doc.length);
    const line = doc.lineAt(from);
    let to = from;
    while (to < line.to && /[^\s]/.test(doc.sliceString(to, to + 1))) to++;
    if (to === from) {
      if (from < line.to) to = from + 1;
      else if (from > line.from) from = from - 1;
      else to = Math.min(from + 1, doc.length);
      if (to === from) to = from;
    }
    view.dispatch(
      setDiagnostics(view.state, [
        { from, to: Math.max(to, from), severity: "error", message: `${job.error?.code}: ${job.error?.message}`, source: "Tessera" },
      ]),
    );
    view.dispatch({ selection: EditorSelection.cursor(from), scrollIntoView: true });
    view.focus();
  };

  const execute = useCallback(
    async (mode: "statement" | "all") => {
      const view = viewRef.current;
      if (!view || cancelRef.current) return;
      const doc = view.state.doc.toString();
      const selection = view.state.selection.main;
      let sent: string;
      let base: number;
      if (!selection.empty) {
        sent = doc.slice(selection.from, selection.to);
        base = selection.from;
      } else if (mode === "all") {
        sent = doc;
        base = 0;
      } else {
        const statement = statementAt(doc, selection.head);
        if (!statement) return;
        sent = statement.text;
        base = statement.start;
      }
      const statements = splitStatements(sent);
      if (statements.length === 0) return;
      const script = statements.length > 1;
      if (!script) {
        base += statements[0].start;
        sent = statements[0].text;
      }
      view.dispatch(setDiagnostics(view.state, []));
      const controller = new AbortController();
      cancelRef.current = controller;
      setRunning(true);
      const startedAt = Date.now();
      setNow(startedAt);
      setRun({
        job: null,
        step: null,
        startedAt,
        endedAt: null,
        summary: null,
        requestError: null,
        done: [],
      });
      setPicked(null);
      let last: Job | null = null;
      try {
        let current = await ensureSession();
        const submit = () =>
          post<ScriptJob | { jobs: ScriptJob[] }>(
            `/sessions/${enc(current.id)}/statements`,
            script ? { sql: sent, script: true } : { sql: sent },
          );
        let answer: ScriptJob | { jobs: ScriptJob[] };
        try {
          answer = await submit();
        } catch (error) {
          if (!(error instanceof ApiError && error.status === 404)) throw error;
          // The session expired or was deleted: open a new one transparently, once.
          sessionRef.current = null;
          sessionIdRef.current = null;
          current = await ensureSession();
          answer = await submit();
        }
        const jobs: ScriptJob[] = "jobs" in answer ? answer.jobs : [answer];
        // Where each job's text starts in the editor (job.sql is a piece of what was sent).
        let cursor = 0;
        const bases = jobs.map((job) => {
          const at = sent.indexOf(job.sql, cursor);
          if (at < 0) return base;
          cursor = at + job.sql.length;
          return base + at;
        });
        for (let index = 0; index < jobs.length; index++) {
          const step: [number, number] | null = jobs.length > 1 ? [index + 1, jobs.length] : null;
          setRun((state) => state && { ...state, job: jobs[index], step });
          last = await pollJob(
            jobs[index].id,
            (job) => setRun((state) => state && { ...state, job, step }),
            controller.signal,
          );
          const ended = last;
          setRun((state) => state && { ...state, done: [...state.done, ended] });
          if (last.status !== "FINISHED") {
            markError(last, last.sql, bases[index], doc);
            break;
          }
        }
      } catch (error) {
        if (!(error instanceof DOMException && error.name === "AbortError")) {
          setRun((state) => state && { ...state, requestError: errorText(error) });
        }
      } finally {
        cancelRef.current = null;
        setRunning(false);
        const endedAt = Date.now();
        setRun((state) => state && { ...state, endedAt });
      }
      // After each job: re-read the session (USE, SET), refresh the panels and caches.
      cache.clear();
      let fresh: Session | null = sessionRef.current;
      if (sessionRef.current) {
        fresh = await get<Session>(`/sessions/${enc(sessionRef.current.id)}`).catch(() => sessionRef.current);
        if (fresh) setSession(fresh);
      }
      setRefreshKey((key) => key + 1);
      onJobDone();
      if (last) {
        const finished = last;
        const summary = await summaryOf(finished, fresh).catch(() => null);
        setRun((state) => (state && state.job?.id === finished.id ? { ...state, summary } : state));
      }
    },
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [ensureSession, cache, onJobDone, setSession],
  );

  const cancel = async () => {
    const job = run?.job;
    if (!job) return;
    try {
      const answer = await post<Job>(`/jobs/${enc(job.id)}/cancel`);
      setRun((state) => (state && state.job?.id === answer.id ? { ...state, job: answer } : state));
    } catch (error) {
      if (!(error instanceof ApiError && error.code === "ILLEGAL_TRANSITION"))
        setRun((state) => state && { ...state, requestError: errorText(error) });
    }
  };

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
      setRun((state) => ({
        job: state?.job ?? null,
        step: null,
        startedAt: state?.startedAt ?? Date.now(),
        endedAt: state?.endedAt ?? Date.now(),
        summary: state?.summary ?? null,
        requestError: `Cannot format: ${errorText(error)}`,
        done: state?.done ?? [],
      }));
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
  }, []);

  const saveQuery = useCallback(async () => {
    const current = tabRef.current;
    const sql = viewRef.current?.state.doc.toString() ?? current.sql;
    if (!current.savedQueryId) {
      setSaving(true);
      return;
    }
    try {
      await patch<SavedQuery>(`/saved-queries/${enc(current.savedQueryId)}`, { sql });
      setSaveNote(`Saved at ${new Date().toLocaleTimeString()}`);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        onUpdate(current.id, { savedQueryId: null });
        setSaving(true);
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

  const onDocChange = useCallback(
    (() => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      return (doc: string) => {
        clearTimeout(timer);
        timer = setTimeout(() => onUpdate(tab.id, { sql: doc }), 250);
      };
    })(),
    [onUpdate, tab.id],
  );

  const replaceDoc = (sql: string) => {
    const view = viewRef.current;
    if (!view) return;
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: sql }, selection: EditorSelection.cursor(sql.length) });
    view.focus();
  };

  const job = run?.job ?? null;
  const elapsed = run ? (run.endedAt ?? now) - run.startedAt : 0;
  // A script's statements can each be looked at once they have ended; the last by default.
  const shown = (picked !== null ? run?.done[picked] : undefined) ?? job;
  const showGrid =
    shown?.status === "FINISHED" &&
    shown.result &&
    !shown.result.columns.every((column) => SENTENCE_COLUMNS.has(column.name));

  return (
    <div className="tab-pane" hidden={!visible} data-testid="tab-pane" data-tab-id={tab.id}>
      <div className="editor-main">
        <div
          className="toolbar editor-toolbar"
          onKeyDown={(event) => {
            if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
              event.preventDefault();
              void execute(event.shiftKey ? "all" : "statement");
            }
          }}
        >
          <button type="button" className="primary" onClick={() => void execute("statement")} disabled={running} title="Run the statement at the cursor or the selection (Ctrl+Enter)">
            Run
          </button>
          <button type="button" onClick={() => void execute("all")} disabled={running} title="Run the whole script (Ctrl+Shift+Enter)">
            Run all
          </button>
          <button type="button" onClick={format} title="Format (Shift+Alt+F)">
            Format
          </button>
          <button type="button" onClick={() => void saveQuery()} title={tab.savedQueryId ? "Update the saved query (Ctrl+S)" : "Save as a saved query (Ctrl+S)"}>
            {tab.savedQueryId ? "Save" : "Save…"}
          </button>
          {saveNote && <span className="muted small-text" role="status">{saveNote}</span>}
          <span className="toolbar-spacer" />
          <label className="inline-field">
            <span>Catalog</span>
            <select
              aria-label="Current catalog"
              value={session?.current_catalog ?? ""}
              onChange={(event) => void switchTo({ current_catalog: event.target.value })}
            >
              {!session?.current_catalog && <option value="">{session ? "—" : "(default)"}</option>}
              {session?.current_catalog && !(catalogs ?? []).includes(session.current_catalog) && (
                <option value={session.current_catalog}>{session.current_catalog}</option>
              )}
              {(catalogs ?? []).map((name) => (
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
              onChange={(event) => void switchTo({ current_database: event.target.value })}
            >
              {!session?.current_database && <option value="">—</option>}
              {session?.current_database && !(databases ?? []).includes(session.current_database) && (
                <option value={session.current_database}>{session.current_database}</option>
              )}
              {(databases ?? []).map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
          </label>
        </div>
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
        <div className="run-area" data-testid="run-area">
          {run === null && <p className="muted">Run a statement to see its result here.</p>}
          {run !== null && (
            <div className="run-status" role="status" data-testid="run-status">
              {job ? (
                <>
                  {running && !["FINISHED", "FAILED", "CANCELED"].includes(job.status) ? (
                    <button type="button" className="danger small" onClick={() => void cancel()}>
                      Cancel
                    </button>
                  ) : null}
                  <span data-testid="run-job-status">
                    <JobStatusBadge status={job.status} />
                  </span>
                  {run.step && (
                    <span className="muted small-text">
                      statement {run.step[0]} of {run.step[1]}
                    </span>
                  )}
                  {running && <JobProgress job={job} />}
                  <span className="muted small-text" data-testid="elapsed">
                    {formatElapsed(elapsed)}
                  </span>
                  <Link to={`/jobs/${encodeURIComponent(job.id)}`} className="small-text">
                    job details
                  </Link>
                </>
              ) : (
                <span className="muted">{running ? "Submitting…" : ""}</span>
              )}
              {run.summary && (
                <span className="run-summary" data-testid="run-summary">
                  {run.summary}
                </span>
              )}
            </div>
          )}
          {run?.requestError && (
            <div className="alert danger" role="alert">
              {run.requestError}
            </div>
          )}
          {job?.error && job.status !== "RUNNING" && (
            <div className="alert danger job-error" role="alert" data-testid="job-error">
              <strong>{job.error.code}</strong>: {job.error.message}
            </div>
          )}
          {run && run.done.length > 1 && (
            <div className="script-steps toolbar" role="group" aria-label="Statements of the script">
              {run.done.map((ended, index) => (
                <button
                  key={ended.id}
                  type="button"
                  className="small"
                  aria-pressed={shown?.id === ended.id}
                  title={ended.sql}
                  onClick={() => setPicked(index)}
                >
                  {index + 1}. <JobStatusBadge status={ended.status} />{" "}
                  <span className="mono">{ended.sql.replace(/\s+/g, " ").slice(0, 40)}</span>
                </button>
              ))}
            </div>
          )}
          {showGrid && shown && (
            <div className="result-box">
              <ResultView job={shown} />
            </div>
          )}
        </div>
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
      {saving && (
        <SaveDialog
          sql={viewRef.current?.state.doc.toString() ?? tab.sql}
          initialName={tab.title}
          onClose={() => {
            setSaving(false);
            viewRef.current?.focus();
          }}
          onSaved={(saved) => {
            setSaving(false);
            onUpdate(tab.id, { savedQueryId: saved.id, title: saved.name });
            setSaveNote(`Saved as “${saved.name}”`);
            viewRef.current?.focus();
          }}
        />
      )}
    </div>
  );
}
