// Autocomplete for the SQL editor: keywords, Spark built-ins, catalog objects through
// GET /complete (the partial path at the cursor; debounced, cached per prefix, stale
// requests aborted), and columns of the tables the statement reads (GET /sessions/{id}/resolve).
import type { Completion, CompletionContext, CompletionResult } from "@codemirror/autocomplete";
import { ApiError, enc, get, isAbort, qs, sleep, type Column } from "../../api";
import builtinsText from "../../../../core/planner/spark_builtins.txt?raw";
import { type Derived, pathAt, selectItems, statementAt, tablesIn, type TableRef } from "./sqlText";

export interface CompleteItem {
  label: string;
  insert: string;
  kind: string;
  detail?: string;
  identifier?: string[];
  staged?: boolean;
}

export const SPARK_KEYWORDS = (
  "select from where group by having order limit offset join inner left right full outer cross " +
  "semi anti on using as and or not null is in between like rlike ilike exists case when then " +
  "else end distinct all union intersect except minus with values table insert into overwrite " +
  "create replace temporary temp view function system catalog database databases schema if " +
  "drop show tables views functions catalogs describe explain use set reset true false cast " +
  "interval partitioned cluster sort distribute asc desc nulls first last lateral window over " +
  "partition rows range unbounded preceding following current row comment options location " +
  "returns return language python execute statement begin tblproperties primary key enforced " +
  "watermark metadata virtual pivot unpivot qualify tablesample date timestamp boolean int " +
  "integer bigint smallint tinyint double float decimal string binary array map struct varchar char"
).split(/\s+/);

/** Spark's built-in function names (words only; operators such as `!=` left out). */
export const SPARK_BUILTINS: string[] = builtinsText
  .split("\n")
  .map((line) => line.trim())
  .filter((line) => /^[a-z_][a-z0-9_]*$/i.test(line));

const KEYWORD_OPTIONS: Completion[] = SPARK_KEYWORDS.map((word) => ({
  label: word.toUpperCase(),
  type: "keyword",
  boost: -2,
}));
const BUILTIN_OPTIONS: Completion[] = SPARK_BUILTINS.map((name) => ({
  label: name,
  type: "function",
  detail: "built-in",
  boost: -1,
}));

const LIMIT = 50;

/** What the completion source needs from the tab it serves. */
export interface CompletionHost {
  /** The tab's session id, opening the session when there is none yet. */
  session(): Promise<string>;
  /** Per-tab caches, cleared after each job (objects may have changed). */
  cache: CompletionCache;
}

export class CompletionCache {
  readonly objects = new Map<string, Promise<CompleteItem[]>>();
  readonly columns = new Map<string, Promise<Column[]>>();
  clear(): void {
    this.objects.clear();
    this.columns.clear();
  }
}

const TYPE_OF: Record<string, string> = {
  catalog: "namespace",
  database: "namespace",
  table: "class",
  view: "interface",
  function: "function",
  temporary_table: "class",
  temporary_view: "interface",
  temporary_function: "function",
};

function toOption(item: CompleteItem): Completion {
  const temporary = item.kind.startsWith("temporary_");
  const detail = [temporary ? "temporary" : "", item.kind.replace("temporary_", ""), item.staged ? "staged" : ""]
    .filter(Boolean)
    .join(" ");
  return {
    label: item.label,
    apply: item.insert || item.label,
    type: TYPE_OF[item.kind] ?? "variable",
    detail: item.detail ? `${detail} · ${item.detail}` : detail,
    boost: 2,
  };
}

/** Objects for a raw partial path, from the cache (also a shorter complete prefix) or /complete. */
async function objectsFor(
  host: CompletionHost,
  raw: string,
  signal: AbortSignal,
): Promise<CompleteItem[]> {
  const cache = host.cache.objects;
  const hit = cache.get(raw);
  if (hit) return hit;
  // A shorter prefix of the same last part whose answer was not cut at the limit holds all.
  const dot = raw.lastIndexOf(".");
  for (let cut = raw.length - 1; cut > dot; cut--) {
    const shorter = cache.get(raw.slice(0, cut));
    if (shorter) {
      const items = await shorter.catch(() => null);
      if (items && items.length < LIMIT) {
        const partial = raw.slice(dot + 1).replaceAll("`", "").toLowerCase();
        return items.filter((item) => item.label.toLowerCase().startsWith(partial));
      }
      break;
    }
  }
  await sleep(120, signal);
  const session = await host.session();
  const request = get<{ items: CompleteItem[] }>(
    `/complete${qs({ session, path: raw, limit: LIMIT })}`,
    { signal },
  ).then((body) => body.items);
  cache.set(raw, request);
  request.catch(() => cache.delete(raw));
  return request;
}

/** The columns of a table or view as this session resolves the path (temporary first). */
export function columnsOf(host: CompletionHost, path: string): Promise<Column[]> {
  const key = path.toLowerCase();
  const hit = host.cache.columns.get(key);
  if (hit) return hit;
  const request = host
    .session()
    .then((session) =>
      // missing=ok: a path typed halfway names nothing yet, which is an answer, not a 404.
      get<{
        found?: boolean;
        object: { schema?: { columns: Column[] }; resolved_schema?: { columns: Column[] } | null } | null;
      }>(`/sessions/${enc(session)}/resolve${qs({ path, kind: "table", missing: "ok" })}`),
    )
    .then((body) =>
      body.found === false || !body.object
        ? []
        : (body.object.resolved_schema?.columns ?? body.object.schema?.columns ?? []),
    )
    .catch((error: unknown) => {
      if (error instanceof ApiError && error.status === 404) return [];
      host.cache.columns.delete(key);
      throw error;
    });
  host.cache.columns.set(key, request);
  return request;
}

/** How deep derived tables are followed (a CTE over a subquery over a CTE …). */
const MAX_DERIVED_DEPTH = 6;

/** The columns of a FROM / JOIN entry: a catalog or temporary object, a subquery or a CTE. */
export function columnsOfRef(host: CompletionHost, ref: TableRef, depth = 0): Promise<Column[]> {
  if (!ref.derived) return columnsOf(host, ref.path);
  return derivedColumns(host, ref.derived, depth);
}

/**
 * A derived table's columns from its SELECT list: names and aliases as written, a column
 * reference with the type of the column it names, `*` and `t.*` expanded from the tables
 * the query reads; the names listed after the derived table's own name replace these.
 */
async function derivedColumns(host: CompletionHost, derived: Derived, depth: number): Promise<Column[]> {
  if (depth >= MAX_DERIVED_DEPTH) return [];
  const items = selectItems(derived.query);
  const needed = items.some((item) => "star" in item || item.source !== null);
  const sources = needed
    ? await Promise.all(
        derived.refs.map((ref) =>
          columnsOfRef(host, ref, depth + 1)
            .catch(() => [] as Column[])
            .then((columns) => ({ ref, columns })),
        ),
      )
    : [];
  const named = (qualifier: string[]) => {
    if (qualifier.length === 0) return sources;
    const name = qualifier[qualifier.length - 1].toLowerCase();
    return sources.filter(({ ref }) =>
      ref.alias !== null ? ref.alias.toLowerCase() === name : ref.parts[ref.parts.length - 1]?.toLowerCase() === name,
    );
  };
  const out: Column[] = [];
  for (const item of items) {
    if ("star" in item) {
      for (const source of named(item.star)) out.push(...source.columns);
      continue;
    }
    const key = item.source?.[item.source.length - 1].toLowerCase();
    const origin =
      item.source === null
        ? undefined
        : named(item.source.slice(0, -1))
            .flatMap((source) => source.columns)
            .find((column) => column.name.toLowerCase() === key);
    out.push({ name: item.name, kind: "physical", data_type: origin?.data_type });
  }
  const renamed = derived.columns;
  return renamed ? out.map((column, i) => (renamed[i] ? { ...column, name: renamed[i] } : column)) : out;
}

const refLabel = (ref: TableRef): string => ref.alias ?? (ref.path || "subquery");

function columnOptions(columns: Column[], table: string): Completion[] {
  return columns.map((column) => ({
    label: column.name,
    type: "property",
    detail: `${column.data_type ?? (column.kind === "physical" ? "column" : column.kind)} · ${table}`,
    boost: 3,
  }));
}

/** Whether the word typed is a number (`12`, `1.5`, `1e3`, `10L`, `0x1F`): no completion pops
 * up while one is typed (no name starts with a digit unquoted; Ctrl+Space still asks). */
export function isNumberLiteral(raw: string): boolean {
  return /^[0-9]/.test(raw);
}

/** The CodeMirror completion source for one tab. */
export function sqlCompletionSource(host: CompletionHost) {
  return async (context: CompletionContext): Promise<CompletionResult | null> => {
    const text = context.state.doc.toString();
    const pos = context.pos;
    // Not inside a string or a comment: a cheap check on the current line.
    const lineStart = text.lastIndexOf("\n", pos - 1) + 1;
    const before = text.slice(lineStart, pos);
    if ((before.match(/'/g) ?? []).length % 2 === 1 || before.includes("--")) return null;
    const path = pathAt(text, pos);
    if (!context.explicit && (path.raw === "" || isNumberLiteral(path.raw))) return null;

    const controller = new AbortController();
    context.addEventListener("abort", () => controller.abort(), { onDocChange: true });
    const statement = statementAt(text, pos);
    const tables = statement ? tablesIn(statement.text) : [];
    const options: Completion[] = [];
    let complete = true;

    try {
      if (path.parts.length === 1) {
        // alias. or table. → that table's columns
        const qualifier = path.parts[0].toLowerCase();
        const table = tables.find(
          (ref) =>
            (ref.alias ?? "").toLowerCase() === qualifier ||
            (!ref.alias && ref.parts[ref.parts.length - 1]?.toLowerCase() === qualifier),
        );
        if (table) options.push(...columnOptions(await columnsOfRef(host, table), refLabel(table)));
      }
      if (path.parts.length === 0) {
        options.push(...KEYWORD_OPTIONS, ...BUILTIN_OPTIONS);
        const lists = await Promise.all(
          tables.map((ref) =>
            columnsOfRef(host, ref)
              .then((columns) => columnOptions(columns, refLabel(ref)))
              .catch(() => []),
          ),
        );
        lists.forEach((list) => options.push(...list));
      }
      if (path.parts.length <= 2 && (path.raw !== "" || context.explicit)) {
        const items = await objectsFor(host, path.raw, controller.signal).catch((error: unknown) => {
          if (isAbort(error)) throw error;
          return [] as CompleteItem[];
        });
        if (items.length >= LIMIT) complete = false;
        options.push(...items.map(toOption));
      }
    } catch (error) {
      if (isAbort(error)) return null;
      throw error;
    }
    if (controller.signal.aborted) return null;
    // Distinct labels (a column and a keyword can share one; keep the first, higher boost).
    const seen = new Set<string>();
    const unique = options.filter((option) => {
      const key = `${option.type}:${option.label}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    return {
      from: path.from,
      options: unique,
      validFor: complete && text[path.from] !== "`" ? /^[A-Za-z0-9_$]*$/ : undefined,
    };
  };
}
