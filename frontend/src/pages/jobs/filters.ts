// The jobs page's filters as they live in the URL query string and as the API takes them
// (unit-tested in filters.test.ts).
import type { JobStatus } from "../../api";

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
}

export const NO_FILTERS: JobFilters = { status: [], kind: "", createdAfter: "", createdBefore: "", q: "" };

export function filtersFromSearch(search: URLSearchParams): JobFilters {
  const status = (search.get("status") ?? "")
    .split(",")
    .map((s) => s.trim().toUpperCase())
    .filter((s): s is JobStatus => (STATUSES as string[]).includes(s));
  return {
    status,
    kind: search.get("kind") ?? "",
    createdAfter: search.get("created_after") ?? "",
    createdBefore: search.get("created_before") ?? "",
    q: search.get("q") ?? "",
  };
}

/** The query string of the page's URL ("" or "?status=…"), keys in a stable order. */
export function searchOfFilters(filters: JobFilters): string {
  const search = new URLSearchParams();
  if (filters.status.length) search.set("status", filters.status.join(","));
  if (filters.kind) search.set("kind", filters.kind);
  if (filters.createdAfter) search.set("created_after", filters.createdAfter);
  if (filters.createdBefore) search.set("created_before", filters.createdBefore);
  if (filters.q) search.set("q", filters.q);
  const text = search.toString();
  return text ? `?${text}` : "";
}

/** A datetime-local value as an ISO-8601 instant for the API (undefined when unset/invalid). */
export function localToIso(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** The API's query parameters for these filters. */
export function apiParams(filters: JobFilters): Record<string, string | undefined> {
  return {
    status: filters.status.length ? filters.status.join(",") : undefined,
    kind: filters.kind || undefined,
    created_after: localToIso(filters.createdAfter),
    created_before: localToIso(filters.createdBefore),
    q: filters.q.trim() || undefined,
  };
}

export function hasFilters(filters: JobFilters): boolean {
  return searchOfFilters(filters) !== "";
}

/** The first line of SQL, trimmed and cut for a one-line cell. */
export function oneLine(sql: string, max = 120): string {
  const flat = sql.replace(/\s+/g, " ").trim();
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
}
