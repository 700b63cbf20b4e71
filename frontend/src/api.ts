// The one way the UI talks to the server: the public REST API under /api/v1 (docs/api.md).
// Session cookie + CSRF header; every failure becomes an ApiError with the contract's code.
import type { components } from "./openapi/schema";

export interface ApiErrorBody {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown>;

  constructor(status: number, body: ApiErrorBody) {
    super(body.message);
    this.status = status;
    this.code = body.code;
    this.details = body.details ?? {};
  }

  /** The field a validation error names (`details.field`), if any. */
  get field(): string | undefined {
    const field = this.details["field"];
    return typeof field === "string" ? field : undefined;
  }
}

export const API = "/api/v1";

export function csrfToken(): string {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

/** One identifier part in a URL path (docs/api.md: names are single parts, percent-encoded). */
export const enc = (part: string): string => encodeURIComponent(part);

/** A query string from the defined values only. */
export function qs(params: Record<string, string | number | boolean | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

type Listener = () => void;
const unauthenticatedListeners = new Set<Listener>();

/** Called when any request answers 401: the shell goes back to the login page. */
export function onUnauthenticated(listener: Listener): () => void {
  unauthenticatedListeners.add(listener);
  return () => unauthenticatedListeners.delete(listener);
}

/** How long to wait before sending a refused request again, or null not to. The server
 * answers 429 with a short Retry-After when the user already has a statement being planned
 * (nothing was done: sending it again is safe); a long wait (sign-in throttling) is shown. */
export function retryDelayMs(
  status: number,
  retryAfter: string | null,
  attempt: number,
): number | null {
  if (status !== 429 || attempt >= 3) return null;
  const seconds = Number(retryAfter ?? "1");
  if (!Number.isFinite(seconds) || seconds < 0 || seconds > 2) return null;
  return Math.max(seconds, 0.2) * 1000 * (attempt + 1);
}

/** The error an aborted request (or wait) rejects with. */
export const abortError = (): DOMException => new DOMException("aborted", "AbortError");

/** The one check for "this was aborted, nobody wants the answer": not an error to show. */
export function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === "AbortError";
}

/** Wait `ms`, or reject with an AbortError as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError());
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(abortError());
      },
      { once: true },
    );
  });
}

/** A request's answer: its status, its ETag, and its body (undefined for 204 and 304). */
interface Answer<T> {
  status: number;
  etag: string | null;
  data: T;
}

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

async function request<T>(
  method: Method,
  path: string,
  body?: unknown,
  init: { signal?: AbortSignal; ifNoneMatch?: string } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET") headers["X-CSRFToken"] = csrfToken();
  // Set by hand, the header makes fetch hand a 304 to us instead of answering from its cache.
  if (init.ifNoneMatch) headers["If-None-Match"] = init.ifNoneMatch;
  let response: Response;
  for (let attempt = 0; ; attempt++) {
    try {
      response = await fetch(`${API}${path}`, {
        method,
        headers,
        credentials: "same-origin",
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: init.signal,
      });
    } catch (error) {
      if (isAbort(error)) throw error;
      throw new ApiError(0, { code: "NETWORK_ERROR", message: "The server cannot be reached." });
    }
    const delay = retryDelayMs(response.status, response.headers.get("Retry-After"), attempt);
    if (delay === null) break;
    await sleep(delay, init.signal);
  }
  const etag = response.headers.get("ETag");
  if (response.status === 204 || response.status === 304) {
    return { status: response.status, etag, data: undefined as T };
  }
  const text = await response.text();
  let data: unknown;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const error =
      data && typeof data === "object" && "error" in data
        ? (data as { error: ApiErrorBody }).error
        : { code: "SERVER_ERROR", message: `The server answered ${response.status}.` };
    if (response.status === 401) unauthenticatedListeners.forEach((listener) => listener());
    throw new ApiError(response.status, error);
  }
  return { status: response.status, etag, data: data as T };
}

export async function api<T>(
  method: Method,
  path: string,
  body?: unknown,
  init: { signal?: AbortSignal } = {},
): Promise<T> {
  return (await request<T>(method, path, body, init)).data;
}

/** A GET that the server may hold (`?wait=`) until the resource differs from the version
 * `etag` names: the new body and its ETag, or null when it did not change (304). */
export async function getIfChanged<T>(
  path: string,
  etag: string | null,
  init: { signal?: AbortSignal } = {},
): Promise<{ data: T; etag: string | null } | null> {
  const answer = await request<T>("GET", path, undefined, { ...init, ifNoneMatch: etag ?? undefined });
  return answer.status === 304 ? null : { data: answer.data, etag: answer.etag };
}

export const get = <T>(path: string, init?: { signal?: AbortSignal }) =>
  api<T>("GET", path, undefined, init);
export const post = <T>(path: string, body?: unknown, init?: { signal?: AbortSignal }) =>
  api<T>("POST", path, body ?? {}, init);
export const patch = <T>(path: string, body: unknown) => api<T>("PATCH", path, body);
export const put = <T = void>(path: string, body?: unknown) => api<T>("PUT", path, body);
export const del = <T = void>(path: string) => api<T>("DELETE", path);

// --- Shapes (docs/api.md §2) -----------------------------------------------------------------
// Generated from the server's OpenAPI document (src/openapi/, `make api-types`; `make test`
// fails when they drift). Only what the document lacks is written here, each with its reason:
// a field the document leaves loose (a JSON field, a free string that is an enum in docs/api.md) is
// refined field by field, everything else is the generated type under a short name.

type Schemas = components["schemas"];

/** Hand-written: one generic for the document's many `…Page` types (same two fields). */
export interface Page<T> {
  items: T[];
  next_page_token: string | null;
}

export type User = Schemas["UserOut"];
export type Catalog = Schemas["CatalogOut"];
export type Database = Schemas["DatabaseOut"];
export type Session = Schemas["SessionOut"];
export type Upload = Schemas["UploadOut"];
/** POST /sessions answers where the new session started (`started_in`). */
export type SessionCreated = Schemas["SessionCreatedOut"];
export type Workspace = Schemas["WorkspaceOut"];
export type ResultColumn = Schemas["ColumnOut"];
export type ResultPage = Schemas["ResultPageOut"];
/** One version of a managed table (docs/api.md, "Table versions"), newest first in lists;
 * `rows` and `metrics` are null for a reader without SELECT on the table. Refined: `metrics`
 * is a JSON field. */
export type TableVersion = Omit<Schemas["TableVersionOut"], "metrics"> & {
  metrics: Record<string, unknown> | null;
};
/** A table's creation or schema change (GET …/tables/{t}/schema-changes, from the audit log),
 * newest first, and one of its changes (`change`: added, dropped, type, comment, moved,
 * primary_key, watermarks). */
export type SchemaChange = Schemas["SchemaChangeOut"];
export type SchemaChangeItem = Schemas["SchemaChangeItemOut"];
/** A saved query (docs/api.md): readable by the owner's teams when shared. */
export type SavedQuery = Schemas["SavedQueryOut"];

// Hand-written: the table schema is a JSON field on the server (FLIP-164 form, docs/api.md §2).
export type ColumnKind = "physical" | "computed" | "metadata";

export interface Column {
  name: string;
  kind: ColumnKind;
  data_type?: string;
  expression?: string;
  metadata_key?: string;
  virtual?: boolean;
  nullable?: boolean;
  comment?: string;
}

export interface Watermark {
  column: string;
  expression: string;
}

export interface PrimaryKey {
  name: string | null;
  columns: string[];
}

export interface Schema {
  columns: Column[];
  watermarks: Watermark[];
  primary_key: PrimaryKey | null;
}

/** A table or a view (the list endpoints answer both shapes). Refined: `kind` and `status`
 * are free strings in the document, `schema` a JSON field. */
export type Table = Omit<Schemas["TableOut"], "kind" | "status" | "schema" | "resolved_schema"> &
  Partial<Pick<Schemas["ViewOut"], "query" | "expanded_query">> & {
    kind: "table" | "view";
    status?: "active" | "staged";
    schema: Schema;
    resolved_schema: Schema | null;
  };

/** Refined: `kind` and `language` are free strings, `parameters` JSON objects in the document. */
export type FunctionObject = Omit<Schemas["FunctionOut"], "kind" | "language" | "parameters"> & {
  kind: "function";
  language: "python" | "sql";
  parameters?: { name: string; data_type: string }[];
};

/** Hand-written: a free string in the document (core/jobstate.py). */
export type JobStatus = "CREATED" | "RUNNING" | "FINISHED" | "FAILED" | "CANCELED";

/** A running stream's latest micro-batch (``progress.stream``, docs/api.md §5 "Streaming"). */
export type StreamProgress = Schemas["StreamProgressOut"];

/** Refined: `status` is a free string, `error` and `result` are JSON fields in the document. */
export type Job = Omit<Schemas["JobOut"], "status" | "error" | "result"> & {
  status: JobStatus;
  error: ApiErrorBody | null;
  result: { columns: ResultColumn[]; row_count: number; truncated: boolean } | null;
};

/** One attempt of a Spark stage of a job (``progress.stages``). */
export type JobStage = Schemas["StageOut"];

/** A statement POST's job: its 201 is documented as JobOut, and `result_page` (with `wait` +
 * `page_size`, once FINISHED) only in the description. */
export type StatementAnswer = Job & { result_page?: ResultPage };

/** Refined: `detail` is a JSON field in the document. */
export type JobEvent = Omit<Schemas["EventOut"], "detail"> & {
  detail: Record<string, unknown> | string | null;
};

export const TERMINAL: ReadonlySet<JobStatus> = new Set(["FINISHED", "FAILED", "CANCELED"]);

/** A SQL identifier part, backtick-quoted when it is not a plain name. */
export function quoteIdent(part: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(part) ? part : "`" + part.replaceAll("`", "``") + "`";
}

export const sqlPath = (parts: string[]): string => parts.map(quoteIdent).join(".");

// --- Grants, teams, audit (ADR 0011 §4–5) ---------------------------------------
// Generated, refined where the document is loose (privileges and kinds are free strings there).

/** A privilege (core/privileges.py `Privilege`). */
export type Privilege = "USE" | "SELECT" | "MODIFY" | "CREATE" | "EXECUTE" | "MANAGE" | "READ FILES";

/** What privileges are granted on (storage roots are the admins' and not in this UI). */
export type SecurableKind = "catalog" | "database" | "table" | "view" | "function";

export type PrincipalType = Schemas["PrincipalTypeEnum"];

/** A user or a team, as grants name them (GET /principals items). */
export type PrincipalRef = Schemas["PrincipalOut"];

/** An object named by kind and path (`["c", "d", "t"]`): where a grant is inherited from. */
export type ObjectRef = Omit<Schemas["PermissionSource"], "kind"> & { kind: SecurableKind };

/** `can` of a catalog object (docs/api.md): what the signed-in user may do with it. */
export type Can = Schemas["Can"];

/** One principal's privileges on the object, granted on it (`inherited_from` null) or on its
 * database or catalog. */
export type PrivilegeAssignment = Omit<Schemas["PrivilegeAssignmentOut"], "privileges" | "inherited_from"> & {
  privileges: Privilege[];
  inherited_from: ObjectRef | null;
};

/** GET …/{object}/permissions (and the PATCH answer). Refined: privileges are free strings. */
export type Permissions = Omit<Schemas["PermissionsOut"], "privilege_assignments" | "effective"> & {
  privilege_assignments: PrivilegeAssignment[];
  effective: Privilege[];
};

/** One entry of PATCH …/{object}/permissions `changes`. */
export type PermissionChange = Omit<Schemas["PermissionChangeInRequest"], "add" | "remove"> & {
  add: Privilege[];
  remove: Privilege[];
};

/** /users/me: the user with `can.create_catalog` and their quotas. */
export type Me = Schemas["MeOut"];

/** A team (a Django group); `everyone` is implicit (every user, no member rows). */
export type Team = Schemas["TeamOut"];

/** One member of a team (GET /teams/{t}/members). */
export type TeamMember = Schemas["MemberOut"];

export type AuditAction = Schemas["ActionEnum"];

/** One of a user's API tokens (GET /auth/tokens): never its key. */
export type ApiToken = Schemas["TokenOut"];
/** A new token with its key (POST /auth/tokens): the one time the key is shown. */
export type IssuedToken = Schemas["IssuedToken"];

/** One event of the audit log (GET /audit) or of an object's recent access (…/{object}/access).
 * Widened: an action this build does not know yet (a newer server) is shown as it is. */
export type AuditEvent = Omit<Schemas["AuditEventOut"], "action"> & {
  action: AuditAction | (string & {});
};

// --- Engines (docs/api.md §6, "Engines") --------------------------------------------------------

/** One Spark application for one share key (GET /engines). */
export type Engine = Schemas["EngineOut"];
export type Schedule = Schemas["ScheduleOut"];
export type ScheduleRun = Schemas["ScheduleRunOut"];
export type Alert = Schemas["AlertOut"];
export type AppNotification = Schemas["NotificationOut"];
export type EngineState = Schemas["EngineStateEnum"];

/** GET …/tables/{t}/statistics, and the column statistics ANALYZE stored. */
export type TableStatistics = Schemas["TableStatisticsOut"];
export type ColumnStatistics = Schemas["ColumnStatisticsOut"];
export type ColumnFigures = Schemas["ColumnFiguresOut"];
