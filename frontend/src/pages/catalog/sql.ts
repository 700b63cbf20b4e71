// Running statements for the catalog pages (DDL text, sample data): one session per browser
// tab, created lazily and kept in a module variable; the shared job starter replaces it when
// it expired.
import type { QueryClient } from "@tanstack/react-query";
import { enc, get, post, type Job, type ResultPage, type Session } from "../../api";
import { PAGE_SIZE } from "../../components/results/model";
import { keepAnswer, runToEnd, startStatement, type SessionSource } from "../../data/statements";

let sessionId: Promise<string> | null = null;

export const catalogSession: SessionSource = {
  current() {
    if (!sessionId) {
      sessionId = post<Session>("/sessions", {}).then((s) => s.id);
      sessionId.catch(() => (sessionId = null));
    }
    return sessionId;
  },
  forget() {
    sessionId = null;
  },
};

/** Submit one statement, the server holding the answer up to `wait` seconds (a job that ended
 * by then comes with its first result page, kept for the result view). */
export async function submit(client: QueryClient, sql: string, wait: number, signal?: AbortSignal): Promise<Job> {
  const [answer] = await startStatement(catalogSession, { sql, wait }, signal);
  return keepAnswer(client, answer).job;
}

/** The first page of a finished job's result: the one its answer carried, else fetched. */
export const resultOf = (job: Job, firstPage: ResultPage | null, signal?: AbortSignal): Promise<ResultPage> =>
  firstPage ? Promise.resolve(firstPage) : get<ResultPage>(`/jobs/${enc(job.id)}/result?page_size=${PAGE_SIZE}`, { signal });

/** Submit a statement and follow its job until it ends. */
export function runStatement(
  client: QueryClient,
  sql: string,
  wait: number,
  signal: AbortSignal,
): Promise<{ job: Job; firstPage: ResultPage | null }> {
  return runToEnd(client, catalogSession, { sql, wait }, signal);
}
