// Running statements for the catalog pages (DDL text, sample data): one session per browser
// tab, created lazily and kept in a module variable; a session that expired is replaced.
import { ApiError, TERMINAL, enc, get, post, type Job, type ResultPage, type Session } from "../../api";
import { pollJob } from "../../components/jobs/poll";

let sessionId: Promise<string> | null = null;

function session(): Promise<string> {
  if (!sessionId) {
    sessionId = post<Session>("/sessions", {}).then((s) => s.id);
    sessionId.catch(() => (sessionId = null));
  }
  return sessionId;
}

/** Submit one statement (optionally waiting up to `wait` seconds); retries once on a lost session. */
export async function submit(sql: string, wait = 0): Promise<Job> {
  const id = await session();
  try {
    return await post<Job>(`/sessions/${enc(id)}/statements`, { sql, wait });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      sessionId = null;
      const fresh = await session();
      return post<Job>(`/sessions/${enc(fresh)}/statements`, { sql, wait });
    }
    throw error;
  }
}

/** The first page of a finished job's result. */
export const resultOf = (job: Job) =>
  get<ResultPage>(`/jobs/${enc(job.id)}/result?page_size=1000`);

/** Follow a submitted job until it ends (1 s between polls), reporting each state. */
export async function follow(first: Job, onUpdate: (job: Job) => void, signal: AbortSignal): Promise<Job> {
  onUpdate(first);
  return TERMINAL.has(first.status) ? first : pollJob(first.id, onUpdate, signal, 1000);
}
