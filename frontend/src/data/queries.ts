// Queries by API path: the key is [collection, path], so a write can invalidate a whole
// collection ("catalogs", "jobs", "sessions", "saved-queries") at once.
import { useCallback, useEffect, useMemo, useState } from "react";
import {
  queryOptions,
  useInfiniteQuery,
  useMutation,
  useQuery,
  useQueryClient,
  type QueryClient,
  type QueryKey,
} from "@tanstack/react-query";
import {
  get,
  patch,
  qs,
  type ApiToken,
  type AuditEvent,
  type Engine,
  type Me,
  type Page,
  type PermissionChange,
  type Permissions,
  type PrincipalRef,
  type PrincipalType,
  type Team,
} from "../api";
import { ENGINE_POLL_MS, LIST_POLL_MS } from "./client";

export type Collection =
  | "catalogs"
  | "jobs"
  | "sessions"
  | "saved-queries"
  | "search"
  | "auth"
  | "teams"
  | "principals"
  | "users"
  | "audit"
  | "engines"
  | "schedules"
  | "dashboards"
  | "alerts"
  | "notifications";

/** The collection a path belongs to: its first segment ("/catalogs/demo" → "catalogs"). */
export function collectionOf(path: string): string {
  return path.replace(/^\//, "").split(/[/?]/)[0];
}

export const keyOf = (path: string): QueryKey => [collectionOf(path), path];

/** GET `path` as a query; the query's signal aborts the request when nobody needs it. */
export function apiQuery<T>(path: string) {
  return queryOptions({
    queryKey: keyOf(path),
    queryFn: ({ signal }) => get<T>(path, { signal }),
  });
}

/** What else goes stale when a collection changes: search hits are read from the catalog, so
 * a catalog write (a drop, a rename of a comment, a create, a grant) makes every search answer
 * stale, and writes the audit log. A team change moves who sees what (a deleted team's grants
 * go) and who is in which team. */
const DEPENDENT: Partial<Record<Collection, Collection[]>> = {
  catalogs: ["search", "audit"],
  teams: ["principals", "users", "catalogs", "search", "audit"],
  schedules: ["alerts"],
};

/** The collections a write to `collections` makes stale (themselves and their dependents). */
export function staleAfter(collections: Collection[]): Collection[] {
  return [...new Set(collections.flatMap((collection) => [collection, ...(DEPENDENT[collection] ?? [])]))];
}

/** Everything cached from these collections (and what depends on them) is fetched again (the
 * active queries at once). */
export function invalidate(client: QueryClient, ...collections: Collection[]): Promise<void> {
  return Promise.all(
    staleAfter(collections).map((collection) => client.invalidateQueries({ queryKey: [collection] })),
  ).then(() => undefined);
}

/** A write that invalidates the collections it changes once it succeeds. */
export function useWrite<TArgs, TResult>(
  write: (args: TArgs) => Promise<TResult>,
  changes: Collection[],
) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: write,
    // Not awaited: a page may navigate away at once (e.g. after a drop).
    onSuccess: () => void invalidate(client, ...changes),
  });
}

/** A paged list (docs/api.md: `items` + `next_page_token`), loaded while `enabled`, one page at a
 * time ("Load more"), polled (every `pollMs`, default `LIST_POLL_MS`) while `poll(items)` says
 * something in it is still changing. */
export function usePagedQuery<T>(
  path: string,
  {
    enabled = true,
    pageSize,
    poll,
    pollMs = LIST_POLL_MS,
  }: { enabled?: boolean; pageSize: number; poll?: (items: T[]) => boolean; pollMs?: number },
) {
  const query = useInfiniteQuery({
    queryKey: [...keyOf(path), "paged", pageSize],
    queryFn: ({ pageParam, signal }) =>
      get<Page<T>>(`${path}${path.includes("?") ? "&" : "?"}${qs({ page_size: pageSize, page_token: pageParam }).slice(1)}`, {
        signal,
      }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_page_token,
    enabled,
    refetchInterval: (q) =>
      poll && q.state.data && poll(q.state.data.pages.flatMap((page) => page.items)) ? pollMs : false,
  });
  const items = useMemo(() => query.data?.pages.flatMap((page) => page.items) ?? [], [query.data]);
  const { fetchNextPage } = query;
  return {
    items,
    next: query.hasNextPage,
    loading: query.isFetching,
    loaded: query.isSuccess,
    error: query.error,
    loadMore: useCallback(() => void fetchNextPage(), [fetchNextPage]),
  };
}

/** `value`, once it has stayed the same for `ms` (e.g. a search box). */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/** The time now, ticking every `ms` while `ms` is not null (for durations that grow). */
export function useClock(ms: number | null): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (ms === null) return;
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}

// --- grants, teams, audit (ADR 0011) ---------------------------------------------------------

/** Who may do what on one object: GET `${base}/permissions` (`base` is the object's API path). */
export function usePermissions(base: string, enabled = true) {
  return useQuery({ ...apiQuery<Permissions>(`${base}/permissions`), enabled });
}

/** PATCH `${base}/permissions`: the answer (the new GET body) replaces the cached one, and the
 * object, its parent's lists and search load again (`can`, visibility). */
export function usePatchPermissions(base: string) {
  const client = useQueryClient();
  const path = `${base}/permissions`;
  return useMutation({
    mutationFn: (changes: PermissionChange[]) => patch<Permissions>(path, { changes }),
    onSuccess: (answer) => {
      client.setQueryData(keyOf(path), answer);
      void invalidate(client, "catalogs");
    },
  });
}

/** The teams the user may see (admins: all; others: their own and `everyone`). */
export function useTeams() {
  return usePagedQuery<Team>("/teams", { pageSize: 200 });
}

/** Audit events for GET /audit's parameters (`params` from `auditApiParams`), newest first. */
export function useAudit(params: Record<string, string | undefined>, pageSize = 50) {
  return usePagedQuery<AuditEvent>(`/audit${qs(params)}`, { pageSize });
}

/** The signed-in user's API tokens, newest first (GET /auth/tokens). */
export function useTokens() {
  return usePagedQuery<ApiToken>("/auth/tokens", { pageSize: 100 });
}

/** The signed-in user with `can.create_catalog` (GET /users/me). */
export function useMe() {
  return useQuery({ ...apiQuery<Me>("/users/me"), staleTime: 60_000 });
}

/** Users and teams whose names start with `q`, for a picker (GET /principals, ≤ 20 names). */
export function usePrincipals(q: string, kind: PrincipalType | undefined, enabled: boolean) {
  return useQuery({
    ...apiQuery<Page<PrincipalRef>>(`/principals${qs({ q, kind })}`),
    enabled,
    staleTime: 10_000,
  });
}

// --- engines (docs/api.md "Engines") -----------------------------------------------------------

/** The engines the user may see (admins: all), live first; `live` keeps STARTING, READY and
 * STOPPING ones. Asked again every `ENGINE_POLL_MS`: they change without the page doing anything. */
export function useEngines(live: boolean) {
  return usePagedQuery<Engine>(`/engines${qs({ state: live ? "live" : undefined })}`, {
    pageSize: 100,
    poll: () => true,
    pollMs: ENGINE_POLL_MS,
  });
}
