// useStatementRunner: run the statement at the cursor, the selection or the whole script in
// a tab's session; follow each job (the shared job query) until it ends, mark an error in the
// text, cancel, and summarise the last job. A script runs statement after statement and stops
// at the first that does not finish.
import { useCallback, useRef, useState, type RefObject } from "react";
import { useQueryClient } from "@tanstack/react-query";
import { setDiagnostics } from "@codemirror/lint";
import { EditorSelection } from "@codemirror/state";
import type { EditorView } from "@codemirror/view";
import { ApiError, TERMINAL, isAbort, type Job, type ResultPage, type Session } from "../../api";
import { keepAnswer, startStatement, untilEnded, type SessionSource } from "../../data/statements";
import { useClock } from "../../data/queries";
import { cancelJob } from "../../components/jobs/JobProgress";
import { isStreaming } from "../../components/jobs/stream";
import { summaryOf } from "./runSummary";
import { indexOfCodePoint, parameterNames, splitStatements, statementAt } from "./sqlText";
import { errorRange, markFailedStatement, type ErrorAt, type ErrorPlace } from "./errorMarks";
import { errorText } from "./types";

/** How often the elapsed time of a running statement is redrawn. */
const ELAPSED_TICK_MS = 200;

export interface RunState {
  job: Job | null;
  /** 1-based statement number and count, for scripts. */
  step: [number, number] | null;
  startedAt: number;
  endedAt: number | null;
  summary: string | null;
  requestError: string | null;
  /** The jobs of this run that have ended, in order (a script has several). */
  done: Job[];
  /** Where the failed statement's error was marked in the editor, if it was. */
  errorAt?: ErrorAt | null;
  /** Its result may be written while it runs (a row limit above the session's was sent, or a
   * running job shown again after a reload): its first rows are followed as they come. */
  mayStream?: boolean;
}

export type RunMode = "statement" | "all";

/** What is sent for `mode`: the selection, the whole text, or the statement at the cursor;
 * `base` is where it starts in the document. Null when there is nothing to run. */
export function pickStatements(
  doc: string,
  selection: { from: number; to: number; head: number; empty: boolean },
  mode: RunMode,
): { sent: string; base: number; script: boolean } | null {
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
    if (!statement) return null;
    sent = statement.text;
    base = statement.start;
  }
  const statements = splitStatements(sent);
  if (statements.length === 0) return null;
  if (statements.length > 1) return { sent, base, script: true };
  return { sent: statements[0].text, base: base + statements[0].start, script: false };
}

/** Mark a job's error in the editor (when the text is still what was run): underline its
 * place and, in a script, highlight the failing statement. Answers the editor line named. */
function markError(view: EditorView | null, job: Job, base: number, docAtRun: string, statement: number | null): ErrorAt | null {
  if (!view || view.state.doc.toString() !== docAtRun) return null;
  const doc = view.state.doc;
  const start = Math.min(base, doc.length);
  const range = errorRange(job.sql, base, job.error?.details as ErrorPlace | undefined, doc.length);
  if (!range && statement === null) return null;
  if (range) {
    const message = `${job.error?.code}: ${job.error?.message}`;
    view.dispatch(setDiagnostics(view.state, [{ ...range, severity: "error", message, source: "Tessera" }]));
  }
  const at = range ? range.from : start;
  const failed = statement !== null ? markFailedStatement.of({ from: start, to: Math.min(base + job.sql.length, doc.length) }) : [];
  view.dispatch({ effects: failed, selection: EditorSelection.cursor(at), scrollIntoView: true });
  view.focus();
  return { line: doc.lineAt(at).number, statement };
}

export function useStatementRunner({
  viewRef,
  ensureSession,
  forgetSession,
  afterRun,
  parametersFor,
  rowLimitFor,
  onJob,
}: {
  viewRef: RefObject<EditorView | null>;
  /** The values of the `:name` markers of `sql`, as sent with it. */
  parametersFor(sql: string): Record<string, string | number | null>;
  /** The row limit to send with a single statement (null: the session's). */
  rowLimitFor?(): number | null;
  ensureSession(): Promise<Session>;
  forgetSession(): void;
  /** Called once a run has ended; answers the session as it is now (for the summary). */
  afterRun(last: Job | null): Promise<Session | null>;
  /** The job the run follows now, called as soon as it is known (and with null and the text
   * when a statement is sent), so that a reload shows this run and never the one before it. */
  onJob?(job: Job | null, sent?: string): void;
}) {
  const client = useQueryClient();
  const [run, setRun] = useState<RunState | null>(null);
  const [picked, setPicked] = useState<number | null>(null);
  const [running, setRunning] = useState(false);
  const cancelRef = useRef<AbortController | null>(null);
  const now = useClock(running ? ELAPSED_TICK_MS : null);

  const execute = useCallback(
    async (mode: RunMode) => {
      const view = viewRef.current;
      if (!view || cancelRef.current) return;
      const doc = view.state.doc.toString();
      const picked = pickStatements(doc, view.state.selection.main, mode);
      if (!picked) return;
      const { sent, base, script } = picked;
      const parameters = script ? {} : parametersFor(sent);
      // The server refuses a row limit for a script: its statements keep the session's.
      const rowLimit = script ? null : (rowLimitFor?.() ?? null);
      view.dispatch(setDiagnostics(view.state, []));
      view.dispatch({ effects: markFailedStatement.of(null) });
      if (script && parameterNames(sent).length > 0) {
        const message =
          "A script with parameters (:name) cannot run as a whole: put the cursor in one statement (or select it) and press Run.";
        setRun({ job: null, step: null, startedAt: Date.now(), endedAt: Date.now(), summary: null, requestError: message, done: [] });
        return;
      }
      const controller = new AbortController();
      cancelRef.current = controller;
      setRunning(true);
      setRun({ job: null, step: null, startedAt: Date.now(), endedAt: null, summary: null, requestError: null, done: [], mayStream: rowLimit !== null });
      setPicked(null);
      onJob?.(null, script ? undefined : sent);
      let last: Job | null = null;
      let lastPage: ResultPage | null = null;
      try {
        const sessions: SessionSource = { current: () => ensureSession().then((found) => found.id), forget: forgetSession };
        const answers = await startStatement(sessions, script ? { sql: sent, script: true } : { sql: sent, parameters, rowLimit });
        const kept = answers.map((answer) => keepAnswer(client, answer));
        const jobs: Job[] = kept.map((entry) => entry.job);
        // Where each job's text starts in the editor: the server says where each statement of
        // a script starts in what was sent (in code points), so nothing is split again here.
        const bases = jobs.map((job) => base + indexOfCodePoint(sent, job.script?.offset ?? 0));
        for (let index = 0; index < jobs.length; index++) {
          const step: [number, number] | null = jobs.length > 1 ? [index + 1, jobs.length] : null;
          setRun((state) => state && { ...state, job: jobs[index], step });
          onJob?.(jobs[index]);
          const ended: Job = await untilEnded(client, jobs[index], controller.signal, (job) => {
            setRun((state) => state && { ...state, job, step });
          });
          last = ended;
          if (ended === jobs[index]) lastPage = kept[index].firstPage;
          setRun((state) => state && { ...state, done: [...state.done, ended] });
          if (ended.status !== "FINISHED") {
            const errorAt = ended.status === "FAILED" ? markError(viewRef.current, ended, bases[index], doc, step ? index + 1 : null) : null;
            setRun((state) => state && { ...state, errorAt });
            break;
          }
        }
      } catch (error) {
        if (!isAbort(error)) setRun((state) => state && { ...state, requestError: errorText(error) });
      } finally {
        cancelRef.current = null;
        setRunning(false);
        const endedAt = Date.now();
        setRun((state) => state && { ...state, endedAt });
      }
      const fresh = await afterRun(last);
      if (last) {
        const finished = last;
        const summary = await summaryOf(finished, fresh, lastPage).catch(() => null);
        setRun((state) => (state && state.job?.id === finished.id ? { ...state, summary } : state));
      }
    },
    [client, viewRef, ensureSession, forgetSession, afterRun, parametersFor, rowLimitFor, onJob],
  );

  const cancel = useCallback(async () => {
    const job = run?.job;
    if (!job) return;
    try {
      const answer = await cancelJob(job.id);
      setRun((state) => (state && state.job?.id === answer.id ? { ...state, job: answer } : state));
    } catch (error) {
      if (!(error instanceof ApiError && error.code === "ILLEGAL_TRANSITION"))
        setRun((state) => state && { ...state, requestError: errorText(error) });
    }
  }, [run]);

  /** Show a tab's last run again (after a reload): an ended job or a stream as it is, a job
   * still running followed until it ends (with Cancel), as a run would; nothing when a run
   * has started meanwhile. */
  const restore = useCallback(
    async (job: Job) => {
      if (cancelRef.current) return;
      if (TERMINAL.has(job.status) || isStreaming(job)) {
        // A stream is followed by the run area (useJob) and runs until stopped: Run stays free.
        setRun((state) =>
          state ?? { job, step: null, startedAt: Date.now(), endedAt: Date.now(), summary: null, requestError: null, done: [job] },
        );
        return;
      }
      const controller = new AbortController();
      cancelRef.current = controller;
      // Elapsed counts from when the job was sent, not from the reload (never in the future).
      const startedAt = Math.min(Date.parse(job.created_at) || Date.now(), Date.now());
      setRunning(true);
      // Its row limit is not known here: its rows are followed as if it may stream.
      setRun({ job, step: null, startedAt, endedAt: null, summary: null, requestError: null, done: [], mayStream: true });
      let last: Job | null = null;
      try {
        const ended = await untilEnded(client, job, controller.signal, (update) => {
          setRun((state) => (state && state.job?.id === update.id ? { ...state, job: update } : state));
        });
        last = ended;
        setRun((state) => state && { ...state, job: ended, done: [ended] });
      } catch (error) {
        if (!isAbort(error)) setRun((state) => state && { ...state, requestError: errorText(error) });
      } finally {
        cancelRef.current = null;
        setRunning(false);
        const endedAt = Date.now();
        setRun((state) => state && { ...state, endedAt });
      }
      const fresh = await afterRun(last);
      if (last) {
        const finished = last;
        const summary = await summaryOf(finished, fresh, null).catch(() => null);
        setRun((state) => (state && state.job?.id === finished.id ? { ...state, summary } : state));
      }
    },
    [client, afterRun],
  );

  /** Show a problem that is not a job's (e.g. the formatter failed) where run errors show. */
  const fail = useCallback((message: string) => {
    setRun((state) => ({
      job: state?.job ?? null,
      step: null,
      startedAt: state?.startedAt ?? Date.now(),
      endedAt: state?.endedAt ?? Date.now(),
      summary: state?.summary ?? null,
      requestError: message,
      done: state?.done ?? [],
    }));
  }, []);

  const elapsed = run ? Math.max(0, (run.endedAt ?? now) - run.startedAt) : 0;
  return { run, running, picked, setPicked, elapsed, execute, cancel, fail, restore };
}
