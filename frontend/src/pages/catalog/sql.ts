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

const databaseSessions = new Map<string, Promise<string>>();

/** A session whose current catalog and database are `catalog`.`database` (one per database per
 * browser tab): DDL of a create form in a database resolves its unqualified names there, as a
 * view's query `SELECT … FROM orders` typed in `cat.db` means `cat.db.orders`. */
export function sessionIn(catalog: string, database: string): SessionSource {
  const key = JSON.stringify([catalog, database]);
  return {
    current() {
      let id = databaseSessions.get(key);
      if (!id) {
        id = post<Session>("/sessions", { current_catalog: catalog, current_database: database }).then((s) => s.id);
        databaseSessions.set(key, id);
        id.catch(() => databaseSessions.delete(key));
      }
      return id;
    },
    forget() {
      databaseSessions.delete(key);
    },
  };
}

/** Submit one statement, the server holding the answer up to `wait` seconds (a job that ended
 * by then comes with its first result page, kept for the result view). */
export async function submit(client: QueryClient, sql: string, wait: number, signal?: AbortSignal): Promise<Job> {
  const [answer] = await startStatement(catalogSession, { sql, wait }, signal);
  return keepAnswer(client, answer).job;
}

/** The first page of a finished job's result: the one its answer carried, else fetched. */
export const resultOf = (job: Job, firstPage: ResultPage | null, signal?: AbortSignal): Promise<ResultPage> =>
  firstPage ? Promise.resolve(firstPage) : get<ResultPage>(`/jobs/${enc(job.id)}/result?page_size=${PAGE_SIZE}`, { signal });

/** Submit a statement and follow its job until it ends (in the catalog pages' session unless
 * another is given). */
export function runStatement(
  client: QueryClient,
  sql: string,
  wait: number,
  signal: AbortSignal,
  sessions: SessionSource = catalogSession,
): Promise<{ job: Job; firstPage: ResultPage | null }> {
  return runToEnd(client, sessions, { sql, wait }, signal);
}
