// useTabSession: an editor tab's session — restored from its persisted id, opened as soon as
// the tab shows (where the server says: the user's last place or default), replaced when it answers 404 — with its current catalog and
// database and the lists the toolbar offers. All server state goes through the query cache.
import { useCallback, useEffect, useRef, useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { ApiError, enc, patch, post, type Catalog, type Database, type Page, type Session, type SessionCreated } from "../../api";
import { apiQuery, invalidate, keyOf } from "../../data/queries";
import { errorText, type TabOpen } from "./types";

/** A new tab's session: in the catalog it was opened for, else where the server says the
 * user's sessions start (their last place, their default, the server's default, or none:
 * never a catalog picked by name order). */
async function createSession(catalog?: string, database?: string): Promise<SessionCreated> {
  if (catalog) {
    return post<SessionCreated>("/sessions", {
      current_catalog: catalog,
      ...(database ? { current_database: database } : {}),
    });
  }
  return post<SessionCreated>("/sessions", { start: "workspace" });
}

const sessionPath = (id: string) => `/sessions/${enc(id)}`;
const notFound = (error: unknown) => error instanceof ApiError && error.status === 404;

/** Where a tab's new session started, as the server said. */
export type StartedIn = SessionCreated["started_in"];

export interface TabSession {
  session: Session | null;
  /** Where the session this tab opened started (null: restored or not opened yet). */
  startedIn: StartedIn | null;
  sessionError: string | null;
  catalogs: string[];
  databases: string[];
  /** The session, created (or replaced after a 404) when needed. */
  ensureSession(): Promise<Session>;
  /** The session answered 404: the next ensureSession opens a new one. */
  forgetSession(): void;
  /** After a run: read the session again (USE, SET) and the catalog lists (CREATE, DROP);
   * answers the session as it is now. */
  refreshSession(): Promise<Session | null>;
  switchTo(change: { current_catalog?: string; current_database?: string }): Promise<void>;
}

export function useTabSession({
  initialId,
  open,
  visible,
  onSessionId,
}: {
  initialId: string | null;
  open: TabOpen | undefined;
  /** The toolbar's lists load once the tab first shows. */
  visible: boolean;
  onSessionId(id: string | null): void;
}): TabSession {
  const client = useQueryClient();
  const [sessionId, setSessionId] = useState(initialId);
  const idRef = useRef(initialId);
  const pending = useRef<Promise<Session> | null>(null);
  const [switchError, setSwitchError] = useState<string | null>(null);
  const [startedIn, setStartedIn] = useState<StartedIn | null>(null);
  const [shown, setShown] = useState(visible);
  if (visible && !shown) setShown(true);

  const adopt = useCallback(
    (id: string | null) => {
      if (id === idRef.current) return;
      idRef.current = id;
      setSessionId(id);
      onSessionId(id);
    },
    [onSessionId],
  );

  const sessionQuery = useQuery({ ...apiQuery<Session>(sessionPath(sessionId ?? "")), enabled: !!sessionId, retry: false });
  const session = sessionId ? (sessionQuery.data ?? null) : null;
  // A persisted session that is gone (404) is replaced lazily, on the next run.
  const loadError = sessionQuery.error && !notFound(sessionQuery.error) ? errorText(sessionQuery.error) : null;

  const catalogsQuery = useQuery({ ...apiQuery<Page<Catalog>>("/catalogs?page_size=1000"), enabled: shown });
  const currentCatalog = session?.current_catalog ?? null;
  const databasesQuery = useQuery({
    ...apiQuery<Page<Database>>(`/catalogs/${enc(currentCatalog ?? "")}/databases?page_size=1000`),
    enabled: !!currentCatalog,
  });

  const ensureSession = useCallback((): Promise<Session> => {
    if (!pending.current) {
      pending.current = (async () => {
        const known = idRef.current;
        if (known) {
          try {
            // The cached session if there is one, else fetched.
            return await client.fetchQuery({ ...apiQuery<Session>(sessionPath(known)), staleTime: Infinity, retry: false });
          } catch (error) {
            if (!notFound(error)) throw error;
          }
        }
        const created = await createSession(open?.catalog, open?.database);
        const { started_in: where, ...session } = created;
        client.setQueryData(keyOf(sessionPath(created.id)), session);
        setStartedIn(where);
        adopt(created.id);
        setSwitchError(null);
        return created;
      })().finally(() => {
        pending.current = null;
      });
    }
    return pending.current;
  }, [client, open, adopt]);

  const forgetSession = useCallback(() => {
    idRef.current = null;
  }, []);

  const refreshSession = useCallback(async (): Promise<Session | null> => {
    void invalidate(client, "catalogs");
    const id = idRef.current;
    if (!id) return null;
    return client.fetchQuery({ ...apiQuery<Session>(sessionPath(id)), staleTime: 0, retry: false }).catch(() => null);
  }, [client]);

  const switchTo = useCallback(
    async (change: { current_catalog?: string; current_database?: string }) => {
      try {
        const current = await ensureSession();
        const updated = await patch<Session>(sessionPath(current.id), change);
        setStartedIn(null); // moved by the user: where it started no longer matters
        client.setQueryData(keyOf(sessionPath(updated.id)), updated);
        setSwitchError(null);
        void invalidate(client, "catalogs");
      } catch (error) {
        setSwitchError(errorText(error));
      }
    },
    [client, ensureSession],
  );

  // A tab that shows opens its session at once, so the toolbar says where it is before
  // anything runs.
  const [openError, setOpenError] = useState<string | null>(null);
  useEffect(() => {
    if (!shown || sessionId) return;
    ensureSession().catch((error: unknown) => setOpenError(errorText(error)));
  }, [shown, sessionId, ensureSession]);

  const listError = catalogsQuery.error ? errorText(catalogsQuery.error) : null;
  return {
    session,
    startedIn,
    sessionError: switchError ?? loadError ?? openError ?? listError,
    catalogs: catalogsQuery.data?.items.map((catalog) => catalog.name) ?? [],
    databases: databasesQuery.data?.items.map((database) => database.name) ?? [],
    ensureSession,
    forgetSession,
    refreshSession,
    switchTo,
  };
}
