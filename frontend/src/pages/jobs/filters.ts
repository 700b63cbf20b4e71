// The jobs page's filters as they live in the URL query string and as the API takes them
// (unit-tested in filters.test.ts).
import type { JobStatus } from "../../api";
import { choicesFromText, listParam, localToIso, searchOf, textParam, toggleChoice } from "../../data/filters";

export const STATUSES: JobStatus[] = ["CREATED", "RUNNING", "FINISHED", "FAILED", "CANCELED"];
export const KINDS = [
  "query",
  "ctas",
  "insert",
  "statement_set",
  "ddl",
  "show",
  "describe",
  "explain",
  "use",
  "set",
];

export interface JobFilters {
  status: JobStatus[];
  kind: string;
  /** datetime-local values ("2024-05-01T13:30"), in the viewer's time zone. */
  createdAfter: string;
  createdBefore: string;
  q: string;
  /** Admins: whose history ("" yours, a user's name, or "*" everyone's). */
  user: string;
}

export const NO_FILTERS: JobFilters = { status: [], kind: "", createdAfter: "", createdBefore: "", q: "", user: "" };
/** The `user` filter that lists everyone's jobs (admins). */
export const EVERYONE = "*";

export function filtersFromSearch(search: URLSearchParams): JobFilters {
  return {
    status: choicesFromText(search.get("status") ?? "", STATUSES, (part) => part.toUpperCase()),
    kind: search.get("kind") ?? "",
    createdAfter: search.get("created_after") ?? "",
    createdBefore: search.get("created_before") ?? "",
    q: search.get("q") ?? "",
    user: search.get("user") ?? "",
  };
}

/** The query string of the page's URL ("" or "?status=…"), keys in a stable order. */
export function searchOfFilters(filters: JobFilters): string {
  return searchOf({
    status: listParam(filters.status),
    kind: filters.kind,
    created_after: filters.createdAfter,
    created_before: filters.createdBefore,
    q: filters.q,
    user: filters.user,
  });
}

/** The API's query parameters for these filters. */
export function apiParams(filters: JobFilters): Record<string, string | undefined> {
  return {
    status: listParam(filters.status),
    kind: filters.kind || undefined,
    created_after: localToIso(filters.createdAfter),
    created_before: localToIso(filters.createdBefore),
    q: textParam(filters.q),
    user: textParam(filters.user),
  };
}

export function hasFilters(filters: JobFilters): boolean {
  return searchOfFilters(filters) !== "";
}

/** Turn one status on or off (kept in STATUSES' order). */
export const toggleStatus = (filters: JobFilters, status: JobStatus): JobStatus[] =>
  toggleChoice(filters.status, status, !filters.status.includes(status), STATUSES);

/** The first line of SQL, trimmed and cut for a one-line cell. */
export function oneLine(sql: string, max = 120): string {
  const flat = sql.replace(/\s+/g, " ").trim();
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
}
