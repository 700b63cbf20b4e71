// Running statements for the catalog pages (DDL text, sample data): one session per browser
// tab, created lazily and kept in a module variable; a session that expired is replaced.
import type { QueryClient } from "@tanstack/react-query";
import { ApiError, TERMINAL, enc, get, post, type Job, type ResultPage, type Session } from "../../api";
import { followJob } from "../../data/jobs";

let sessionId: Promise<string> | null = null;

function session(): Promise<string> {
  if (!sessionId) {
    sessionId = post<Session>("/sessions", {}).then((s) => s.id);
    sessionId.catch(() => (sessionId = null));
  }
  return sessionId;
}

/** Submit one statement (optionally waiting up to `wait` seconds); retries once on a lost session. */
export async function submit(sql: string, wait = 0, signal?: AbortSignal): Promise<Job> {
  const id = await session();
  try {
    return await post<Job>(`/sessions/${enc(id)}/statements`, { sql, wait }, { signal });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      sessionId = null;
      const fresh = await session();
      return post<Job>(`/sessions/${enc(fresh)}/statements`, { sql, wait }, { signal });
    }
    throw error;
  }
}

/** The first page of a finished job's result. */
export const resultOf = (job: Job, signal?: AbortSignal) =>
  get<ResultPage>(`/jobs/${enc(job.id)}/result?page_size=1000`, { signal });

/** Submit a statement and follow its job until it ends. */
export async function runStatement(client: QueryClient, sql: string, wait: number, signal: AbortSignal): Promise<Job> {
  const first = await submit(sql, wait, signal);
  return TERMINAL.has(first.status) ? first : followJob(client, first.id, () => undefined, signal);
}
