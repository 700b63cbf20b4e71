// useServerTabs: the editor's tabs kept on the server (docs/api.md "Editor tabs"). The page paints
// from its localStorage cache at once; the server's list, once it answers, is what the page shows
// (tabSync.reconcile). From then on every change is sent at most SAVE_DELAY_MS later, one write at
// a time through a mutation; a write that fails for a passing reason (offline, 5xx) marks the tabs
// quietly and is sent again with backoff (and as soon as the browser is back online).
import { useCallback, useEffect, useRef, useState, type Dispatch, type SetStateAction } from "react";
import { useMutation, useQuery } from "@tanstack/react-query";
import { ApiError, del, enc, get, patch, post, put } from "../../api";
import { isTransient } from "../../data/client";
import { apiQuery } from "../../data/queries";
import { knownOf, opKey, plan, reconcile, type Known, type Op, type ServerTab, type ServerTabs } from "./tabSync";
import { errorText, newId, type TabMeta } from "./types";

export const TABS_PATH = "/editor-tabs";
const SAVE_DELAY_MS = 400;
const MAX_RETRY_MS = 30_000;

export interface Stored {
  tabs: TabMeta[];
  active: string;
}

/** How a tab stands with the server: `saved`, `pending` (to be sent), `failed` (refused, with the
 * server's words; sent again once it changes) or `retrying` (the server could not be reached). */
export interface TabSync {
  state: "saved" | "pending" | "failed" | "retrying";
  message?: string;
}

const tabPath = (id: string) => `${TABS_PATH}/${enc(id)}`;

/** One write, as the API has it. */
async function send(op: Op): Promise<ServerTab | null> {
  switch (op.kind) {
    case "create": {
      const { savedQueryId, ...rest } = op.body;
      return post<ServerTab>(TABS_PATH, { id: op.id, ...rest, saved_query_id: savedQueryId });
    }
    case "patch": {
      const { savedQueryId, ...rest } = op.changes;
      const body = { version: op.version, ...rest, ...(savedQueryId !== undefined ? { saved_query_id: savedQueryId } : {}) };
      return patch<ServerTab>(tabPath(op.id), body);
    }
    case "delete":
      await del(tabPath(op.id));
      return null;
    case "activate":
      return put<ServerTab>(`${TABS_PATH}/active`, { id: op.id });
  }
}

const is = (error: unknown, status: number, code?: string) =>
  error instanceof ApiError && error.status === status && (code === undefined || error.code === code);

export function freshTab(): TabMeta {
  return { id: newId(), title: "Query 1", sql: "", sessionId: null, savedQueryId: null, version: null };
}

export function useServerTabs(state: Stored, setState: Dispatch<SetStateAction<Stored>>) {
  // The server's list once, at load; after that this browser's writes keep `known` current.
  const list = useQuery({
    ...apiQuery<ServerTabs>(TABS_PATH),
    staleTime: Infinity,
    gcTime: 0,
    refetchInterval: (query) => (query.state.status === "error" ? 5000 : false),
    networkMode: "always",
  });
  // networkMode "always" (here and above): offline, a request fails at once (marked, retried
  // here) instead of waiting paused, unmarked, for the browser to say it is online.
  const write = useMutation({ mutationFn: send, networkMode: "always" });
  const mutate = write.mutateAsync;

  const latest = useRef(state);
  useEffect(() => {
    latest.current = state;
  }, [state]);
  // The tabs the page painted first: a tab not among them was opened by this page load.
  const [painted] = useState(() => new Set(state.tabs.map((tab) => tab.id)));
  const known = useRef<Map<string, Known> | null>(null); // null: the server's list not read yet
  const knownActive = useRef<string | null>(null);
  const refused = useRef(new Map<string, string>()); // op key → the server's words
  // What render reads of the refs above, copied after each round of writes.
  const [seen, setSeen] = useState<{ known: Map<string, Known> | null; active: string | null; refused: Map<string, string> }>({
    known: null,
    active: null,
    refused: new Map(),
  });
  const show = useCallback(
    () =>
      setSeen({
        known: known.current && new Map(known.current),
        active: knownActive.current,
        refused: new Map(refused.current),
      }),
    [],
  );
  const [retrying, setRetrying] = useState(false);
  const running = useRef(false);
  const again = useRef(false);
  const attempt = useRef(0);
  const retryTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const saveTimer = useRef<ReturnType<typeof setTimeout> | null>(null);

  /** A tab's fields as the server now has them, in the page too (another window wrote them);
   * SQL typed here that the server's text lacks is kept in a new tab beside it, not lost. */
  const adopt = useCallback(
    (tab: ServerTab, mySql?: string) => {
      known.current?.set(tab.id, knownOf(tab));
      const copy: TabMeta | null =
        mySql !== undefined && mySql !== tab.sql && mySql.trim() !== ""
          ? { ...freshTab(), title: `${tab.title} (this window)`.slice(0, 200), sql: mySql }
          : null;
      const change = (current: Stored): Stored => ({
        ...current,
        tabs: current.tabs.flatMap((mine) =>
          mine.id === tab.id
            ? [
                {
                  ...mine,
                  title: tab.title,
                  sql: tab.sql,
                  savedQueryId: tab.saved_query_id,
                  catalog: tab.catalog,
                  database: tab.database,
                  version: tab.version,
                  serverSql: tab.sql,
                },
                ...(copy ? [copy] : []),
              ]
            : [mine],
        ),
      });
      latest.current = change(latest.current); // the next plan sees it before React renders
      setState(change);
    },
    [setState],
  );

  const acknowledged = useCallback(
    (op: Op, answer: ServerTab | null) => {
      const map = known.current!;
      if (op.kind === "delete") {
        map.delete(op.id);
        if (knownActive.current === op.id) knownActive.current = null;
        return;
      }
      if (op.kind === "activate") {
        knownActive.current = op.id;
        return;
      }
      if (!answer) return;
      map.set(op.id, knownOf(answer));
      if (answer.active) knownActive.current = answer.id;
      const version = answer.version;
      setState((current) => ({
        ...current,
        tabs: current.tabs.map((tab) => (tab.id === op.id ? { ...tab, version, serverSql: answer.sql } : tab)),
      }));
    },
    [setState],
  );

  const flush = useCallback(async (retry = false) => {
    // While a failed write waits for its retry, changes wait with it (they go in the same round).
    if (!known.current || (retryTimer.current !== null && !retry)) return;
    if (retry) retryTimer.current = null;
    if (running.current) {
      again.current = true;
      return;
    }
    running.current = true;
    try {
      for (;;) {
        again.current = false;
        const { tabs, active } = latest.current;
        const op = plan(tabs, active, known.current, knownActive.current).find((next) => !refused.current.has(opKey(next)));
        if (!op) break;
        try {
          acknowledged(op, await mutate(op));
          attempt.current = 0;
          setRetrying(false);
        } catch (error) {
          if (isTransient(error)) {
            // Offline or a server in trouble: the same write later, sooner when back online.
            setRetrying(true);
            const delay = Math.min(MAX_RETRY_MS, 1000 * 2 ** attempt.current++);
            if (retryTimer.current) clearTimeout(retryTimer.current);
            retryTimer.current = setTimeout(() => void flush(true), delay);
            break;
          }
          if (op.kind === "patch" && is(error, 409, "CONFLICT")) {
            // Another window wrote the tab since: its text wins here (no silent overwrite there).
            try {
              adopt(await get<ServerTab>(tabPath(op.id)), op.changes.sql);
            } catch {
              refused.current.set(opKey(op), errorText(error));
            }
          } else if ((op.kind === "patch" || op.kind === "delete") && is(error, 404)) {
            // Closed in another window: a tab still open here is made again, a closed one is gone.
            known.current.delete(op.id);
          } else {
            refused.current.set(opKey(op), errorText(error));
          }
        }
      }
    } finally {
      running.current = false;
      show();
      if (again.current) void flush();
    }
  }, [acknowledged, adopt, mutate, show]);

  // The server's list arrived: show it, merged with the cache (and a first tab when none).
  useEffect(() => {
    if (!list.data || known.current) return;
    const merged = reconcile(latest.current, list.data);
    known.current = merged.known;
    knownActive.current = list.data.active;
    const shown = merged.tabs.length > 0 ? merged : { tabs: [freshTab()], active: "" };
    // A tab opened here before the list came (a saved query's link, "query this table") stays in
    // front; otherwise the server's active tab is shown.
    const opened = latest.current.active;
    const openedHere = !painted.has(opened) && shown.tabs.some((tab) => tab.id === opened);
    const next = { tabs: shown.tabs, active: openedHere ? opened : shown.active || shown.tabs[0].id };
    latest.current = next;
    setState(next);
    show();
    void flush();
  }, [list.data, setState, flush, show, painted]);

  // Send changes at most SAVE_DELAY_MS after the first of them (not pushed back by more typing).
  useEffect(() => {
    latest.current = state;
    if (!known.current || saveTimer.current !== null) return;
    saveTimer.current = setTimeout(() => {
      saveTimer.current = null;
      void flush();
    }, SAVE_DELAY_MS);
  }, [state, flush]);

  useEffect(() => {
    const online = () => {
      attempt.current = 0;
      if (retryTimer.current) clearTimeout(retryTimer.current);
      void flush(true);
    };
    window.addEventListener("online", online);
    return () => {
      window.removeEventListener("online", online);
      if (retryTimer.current) clearTimeout(retryTimer.current);
      if (saveTimer.current) clearTimeout(saveTimer.current);
    };
  }, [flush]);

  /** How one tab stands with the server. */
  const syncOf = (id: string): TabSync => {
    if (!seen.known) return list.isError ? { state: "retrying", message: errorText(list.error) } : { state: "pending" };
    const ops = plan(state.tabs, state.active, seen.known, seen.active).filter((op) => op.id === id);
    if (ops.length === 0) return { state: "saved" };
    const refusal = ops.map((op) => seen.refused.get(opKey(op))).find((message) => message !== undefined);
    if (refusal !== undefined) return { state: "failed", message: refusal };
    return { state: retrying ? "retrying" : "pending" };
  };
  return { syncOf, loaded: seen.known !== null };
}
