// The one job starter: POST /sessions/{id}/statements for the editor and the catalog pages.
// A session that answers 404 (expired, deleted) is replaced once and the statement sent again.
// One statement is sent with `wait` + `page_size`: a job that ends within the wait comes back
// FINISHED with its first result page, which goes straight into the job and result caches, so
// a short SELECT costs this one request; a longer one is followed as before (followJob).
import type { QueryClient } from "@tanstack/react-query";
import { ApiError, TERMINAL, enc, post, type Job, type ResultPage, type StatementAnswer } from "../api";
import { PAGE_SIZE } from "../components/results/model";
import { seedFirstPage } from "../components/results/resultCache";
import { followJob, jobPath } from "./jobs";
import { keyOf } from "./queries";

/** How long the server may hold a single statement's POST before answering with the job as it
 * is: short enough that a long query shows its progress (and Cancel) soon. */
export const FIRST_ANSWER_WAIT_SECONDS = 2;

/** Where statements run: the current session's id, and a way to drop it once it answered 404
 * (the next `current()` opens a new one). */
export interface SessionSource {
  current(): Promise<string>;
  forget(): void;
}

export interface StatementRequest {
  sql: string;
  /** Every statement of the text, one job each (no `wait`/`page_size`: the server refuses them). */
  script?: boolean;
  parameters?: Record<string, string | number | null>;
  /** Seconds the server may hold the answer; default FIRST_ANSWER_WAIT_SECONDS. */
  wait?: number;
  /** The most rows the result keeps (`row_limit`), instead of the session's limit; one
   * statement only. Above the server's small-result limit the result streams. */
  rowLimit?: number | null;
}

/** What is POSTed for `request`: a single statement also asks for its first result page. */
export function statementBody(request: StatementRequest): Record<string, unknown> {
  if (request.script) return { sql: request.sql, script: true };
  const body: Record<string, unknown> = {
    sql: request.sql,
    wait: request.wait ?? FIRST_ANSWER_WAIT_SECONDS,
    page_size: PAGE_SIZE,
  };
  if (request.parameters && Object.keys(request.parameters).length > 0) body.parameters = request.parameters;
  if (request.rowLimit) body.row_limit = request.rowLimit;
  return body;
}

/** Submit `request` in the source's session; on a 404 the session is forgotten and the statement
 * sent once more in a new one. Answers the jobs (one, or one per statement of a script). */
export async function startStatement(
  sessions: SessionSource,
  request: StatementRequest,
  signal?: AbortSignal,
): Promise<StatementAnswer[]> {
  const body = statementBody(request);
  const send = async () =>
    post<StatementAnswer | { jobs: StatementAnswer[] }>(
      `/sessions/${enc(await sessions.current())}/statements`,
      body,
      { signal },
    );
  let answer: StatementAnswer | { jobs: StatementAnswer[] };
  try {
    answer = await send();
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
    sessions.forget();
    answer = await send();
  }
  return "jobs" in answer ? answer.jobs : [answer];
}

/** Keep what an answer already says: the job in the job cache, and its first result page (when
 * it came with it) in the result cache, where the result view and the job page read them.
 * Answers the job without the page, and the page (null when the answer had none). */
export function keepAnswer(client: QueryClient, answer: StatementAnswer): { job: Job; firstPage: ResultPage | null } {
  const { result_page: firstPage, ...job } = answer;
  if (TERMINAL.has(job.status)) client.setQueryData(keyOf(jobPath(job.id)), job);
  if (firstPage && job.status === "FINISHED") seedFirstPage(client, job.id, firstPage);
  return { job, firstPage: firstPage ?? null };
}

/** The job of an answer once it has ended: at once when the answer was terminal, else followed
 * (long-polled), with `onUpdate` called on each state. */
export function untilEnded(
  client: QueryClient,
  job: Job,
  signal: AbortSignal,
  onUpdate: (job: Job) => void = () => undefined,
): Promise<Job> {
  return TERMINAL.has(job.status) ? Promise.resolve(job) : followJob(client, job.id, onUpdate, signal);
}

/** Submit one statement and wait until its job ended: the ended job and, when the answer
 * carried it, the first page of its result. */
export async function runToEnd(
  client: QueryClient,
  sessions: SessionSource,
  request: StatementRequest,
  signal: AbortSignal,
): Promise<{ job: Job; firstPage: ResultPage | null }> {
  const [answer] = await startStatement(sessions, { ...request, script: false }, signal);
  const { job, firstPage } = keepAnswer(client, answer);
  const ended = await untilEnded(client, job, signal);
  return { job: ended, firstPage: ended === job ? firstPage : null };
}
