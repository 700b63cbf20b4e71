// useTabSession: an editor tab's session — restored from its persisted id, created lazily
// (where the user last worked), replaced when it answers 404 — with its current catalog and
// database and the lists the toolbar offers. All server state goes through the query cache.
import { useCallback, useRef, useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { ApiError, enc, get, patch, post, type Catalog, type Database, type Page, type Session } from "../../api";
import { apiQuery, invalidate, keyOf } from "../../data/queries";
import { errorText, type TabOpen } from "./types";

const WHERE_KEY = "tessera.editor.where";

/** New tabs start where the user last switched to (or in the first catalog there is). */
function rememberWhere(session: Session): void {
  if (!session.current_catalog) return;
  const where = { catalog: session.current_catalog, database: session.current_database };
  localStorage.setItem(WHERE_KEY, JSON.stringify(where));
}

function lastWhere(): { catalog?: string; database?: string | null } {
  try {
    return JSON.parse(localStorage.getItem(WHERE_KEY) ?? "{}") ?? {};
  } catch {
    return {};
  }
}

async function createSession(catalog?: string, database?: string): Promise<Session> {
  if (catalog) {
    return post<Session>("/sessions", {
      current_catalog: catalog,
      ...(database ? { current_database: database } : {}),
    });
  }
  const where = lastWhere();
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

const sessionPath = (id: string) => `/sessions/${enc(id)}`;
const notFound = (error: unknown) => error instanceof ApiError && error.status === 404;

export interface TabSession {
  session: Session | null;
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
        client.setQueryData(keyOf(sessionPath(created.id)), created);
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
        rememberWhere(updated);
        client.setQueryData(keyOf(sessionPath(updated.id)), updated);
        setSwitchError(null);
        void invalidate(client, "catalogs");
      } catch (error) {
        setSwitchError(errorText(error));
      }
    },
    [client, ensureSession],
  );

  const listError = catalogsQuery.error ? errorText(catalogsQuery.error) : null;
  return {
    session,
    sessionError: switchError ?? loadError ?? listError,
    catalogs: catalogsQuery.data?.items.map((catalog) => catalog.name) ?? [],
    databases: databasesQuery.data?.items.map((database) => database.name) ?? [],
    ensureSession,
    forgetSession,
    refreshSession,
    switchTo,
  };
}
