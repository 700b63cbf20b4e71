// Pure text logic of the editor (no DOM, no CodeMirror): statement splitting, the statement
// at the cursor, the dotted path at the cursor (for completion), the tables a statement reads
// (for column completion), and mapping error positions back into the editor text.

export interface Statement {
  /** Offset of the first non-blank character of the statement in the whole text. */
  start: number;
  /** Offset just after its last non-blank character (before the `;`). */
  end: number;
  /** Offset just after the terminating `;` (or the end of the text). */
  stop: number;
  text: string;
}

/** Where a quoted string, quoted identifier or comment starting at `i` ends (exclusive). */
function skipQuoted(text: string, i: number): number {
  const ch = text[i];
  const n = text.length;
  if (ch === "-" && text[i + 1] === "-") {
    const newline = text.indexOf("\n", i);
    return newline < 0 ? n : newline;
  }
  if (ch === "/" && text[i + 1] === "*") {
    const close = text.indexOf("*/", i + 2);
    return close < 0 ? n : close + 2;
  }
  if (ch === "'" || ch === '"' || ch === "`") {
    let j = i + 1;
    while (j < n) {
      if (ch !== "`" && text[j] === "\\") {
        j += 2;
        continue;
      }
      if (text[j] === ch) {
        if (text[j + 1] === ch) {
          j += 2;
          continue;
        }
        return j + 1;
      }
      j++;
    }
    return n;
  }
  return i;
}

const isQuoteStart = (text: string, i: number): boolean => {
  const ch = text[i];
  return (
    ch === "'" ||
    ch === '"' ||
    ch === "`" ||
    (ch === "-" && text[i + 1] === "-") ||
    (ch === "/" && text[i + 1] === "*")
  );
};

const isComment = (text: string, i: number): boolean =>
  (text[i] === "-" && text[i + 1] === "-") || (text[i] === "/" && text[i + 1] === "*");

/**
 * The statements of a script, split at top-level `;` (quotes, backticks and comments
 * respected; `EXECUTE STATEMENT SET BEGIN … END` kept whole). Statements holding only
 * blanks and comments are dropped.
 */
export function splitStatements(text: string): Statement[] {
  const result: Statement[] = [];
  const n = text.length;
  let begin = 0;
  let hasCode = false;
  let words: string[] = [];
  let depth = 0;
  const flush = (endExclusive: number, stop: number) => {
    if (hasCode) {
      let s = begin;
      let e = endExclusive;
      while (s < e && /\s/.test(text[s])) s++;
      while (e > s && /\s/.test(text[e - 1])) e--;
      result.push({ start: s, end: e, stop, text: text.slice(s, e) });
    }
    begin = stop;
    hasCode = false;
    words = [];
    depth = 0;
  };
  let i = 0;
  while (i < n) {
    const ch = text[i];
    if (isQuoteStart(text, i)) {
      if (!isComment(text, i)) hasCode = true;
      i = skipQuoted(text, i);
      continue;
    }
    if (/[A-Za-z_]/.test(ch)) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_]/.test(text[j])) j++;
      const word = text.slice(i, j).toUpperCase();
      if (words.length < 4) words.push(word);
      const isSet = words[0] === "EXECUTE" && words[1] === "STATEMENT" && words[2] === "SET";
      if (isSet && word === "BEGIN") depth++;
      else if (isSet && word === "END" && depth > 0) depth--;
      hasCode = true;
      i = j;
      continue;
    }
    if (ch === ";" && depth === 0) {
      flush(i, i + 1);
      i++;
      continue;
    }
    if (!/\s/.test(ch)) hasCode = true;
    i++;
  }
  flush(n, n);
  return result;
}

/**
 * The statement the cursor is in: the one whose text (with its `;`) contains `pos`; in the
 * blanks between two statements, the one before; before the first, the first one.
 */
export function statementAt(text: string, pos: number): Statement | null {
  const statements = splitStatements(text);
  if (statements.length === 0) return null;
  let chosen: Statement = statements[0];
  for (const statement of statements) {
    if (statement.start <= pos) chosen = statement;
    else break;
  }
  return chosen;
}

export interface PathAtCursor {
  /** The completed parts before the last dot, unquoted. */
  parts: string[];
  /** The partial last part (unquoted), possibly empty. */
  partial: string;
  /** Offset where the last (partial) part starts: completions replace from here. */
  from: number;
  /** Offset where the whole path starts. */
  pathFrom: number;
  /** The raw path text from `pathFrom` to the cursor, e.g. "demo.sa" or "`a b`.x". */
  raw: string;
}

const unquote = (part: string): string =>
  part.startsWith("`") ? part.slice(1, part.endsWith("`") && part.length > 1 ? -1 : undefined).replaceAll("``", "`") : part;

/** The dotted SQL path that ends at `pos` (parts bare or backtick-quoted). */
export function pathAt(text: string, pos: number): PathAtCursor {
  const rawParts: { text: string; from: number }[] = [];
  let i: number;
  // The last part: a bare word, or an (possibly unterminated) backtick-quoted part.
  const readPart = (end: number): { text: string; from: number } | null => {
    let j = end;
    while (j > 0 && /[A-Za-z0-9_$]/.test(text[j - 1])) j--;
    if (j < end) return { text: text.slice(j, end), from: j };
    if (end > 0 && text[end - 1] === "`") {
      // a closed quoted part: find its opening backtick (`` inside is an escaped one)
      let k = end - 2;
      while (k >= 0) {
        if (text[k] === "`") {
          if (k > 0 && text[k - 1] === "`") {
            k -= 2;
            continue;
          }
          return { text: text.slice(k, end), from: k };
        }
        k--;
      }
      return null;
    }
    return { text: "", from: end };
  };
  // An unterminated quoted last part: "`a b" — scan the line back for an odd backtick.
  const lineStart = text.lastIndexOf("\n", pos - 1) + 1;
  const line = text.slice(lineStart, pos);
  const ticks = (line.match(/`/g) ?? []).length;
  let last: { text: string; from: number } | null;
  if (ticks % 2 === 1) {
    const open = lineStart + line.lastIndexOf("`");
    last = { text: text.slice(open, pos), from: open };
  } else {
    last = readPart(pos);
  }
  if (!last) return { parts: [], partial: "", from: pos, pathFrom: pos, raw: "" };
  rawParts.unshift(last);
  i = last.from;
  while (i > 0 && text[i - 1] === ".") {
    const part = readPart(i - 1);
    if (!part || part.text === "") break;
    rawParts.unshift(part);
    i = part.from;
  }
  const partial = unquote(last.text);
  return {
    parts: rawParts.slice(0, -1).map((part) => unquote(part.text)),
    partial,
    from: last.from,
    pathFrom: rawParts[0].from,
    raw: text.slice(rawParts[0].from, pos),
  };
}

export interface TableRef {
  /** The path as written (raw SQL text), e.g. "demo.sales.orders"; a subquery's alias. */
  path: string;
  parts: string[];
  alias: string | null;
  /** Set when the name is a derived table: a subquery in FROM / JOIN, or a CTE. */
  derived?: Derived;
}

/** A derived table: its query, the column names given after its name, its own tables. */
export interface Derived {
  query: string;
  /** `WITH x (a, b) AS (…)` or `(VALUES …) AS v (a, b)`: names that replace its own. */
  columns: string[] | null;
  /** The tables its query reads directly (not those of subqueries nested inside). */
  refs: TableRef[];
}

const NOT_ALIAS = new Set(
  (
    "WHERE GROUP ORDER BY HAVING LIMIT JOIN INNER LEFT RIGHT FULL OUTER CROSS SEMI ANTI ON " +
    "USING UNION INTERSECT EXCEPT MINUS WINDOW LATERAL NATURAL CLUSTER DISTRIBUTE SORT " +
    "TABLESAMPLE PIVOT UNPIVOT QUALIFY OFFSET FETCH FOR SELECT FROM INTO VALUES WITH AS SET"
  ).split(" "),
);

type Tok = { kind: "word" | "ident" | "punct" | "other"; text: string; at: number };

function tokens(text: string): Tok[] {
  const out: Tok[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const ch = text[i];
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    if (isQuoteStart(text, i)) {
      const end = skipQuoted(text, i);
      if (ch === "`") out.push({ kind: "ident", text: text.slice(i, end), at: i });
      else if (!isComment(text, i)) out.push({ kind: "other", text: text.slice(i, end), at: i });
      i = end;
      continue;
    }
    if (/[A-Za-z_]/.test(ch)) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_$]/.test(text[j])) j++;
      out.push({ kind: "word", text: text.slice(i, j), at: i });
      i = j;
      continue;
    }
    out.push({ kind: "punct", text: ch, at: i });
    i++;
  }
  return out;
}

const isWord = (t: Tok | undefined, word: string): boolean =>
  !!t && t.kind === "word" && t.text.toUpperCase() === word;

const isName = (t: Tok | undefined): boolean =>
  !!t && (t.kind === "ident" || (t.kind === "word" && !NOT_ALIAS.has(t.text.toUpperCase())));

/** The index of the `)` closing the `(` at `open` (or the last token when unbalanced). */
function closing(toks: Tok[], open: number): number {
  let depth = 0;
  for (let i = open; i < toks.length; i++) {
    if (toks[i].text === "(") depth++;
    else if (toks[i].text === ")" && --depth === 0) return i;
  }
  return toks.length;
}

/** The text between the `(` at `open` and its `)`. */
function inside(text: string, toks: Tok[], open: number, close: number): string {
  const from = toks[open].at + 1;
  return text.slice(from, close < toks.length ? toks[close].at : text.length);
}

/** Names in parentheses at `open` — `(a, b)` — and the index after the `)`. */
function nameList(toks: Tok[], open: number): { names: string[]; next: number } {
  const close = closing(toks, open);
  const names = toks
    .slice(open + 1, close)
    .filter((t) => t.kind === "word" || t.kind === "ident")
    .map((t) => unquote(t.text));
  return { names, next: close + 1 };
}

/**
 * The common table expressions of a statement that starts with WITH, in order, each with
 * the tables its query reads (earlier CTEs resolved, never itself), and the index of the
 * first token after them.
 */
function ctesOf(
  text: string,
  toks: Tok[],
  scope: Map<string, Derived>,
): { ctes: Map<string, Derived>; next: number } {
  const ctes = new Map(scope);
  if (!isWord(toks[0], "WITH")) return { ctes, next: 0 };
  let i = isWord(toks[1], "RECURSIVE") ? 2 : 1;
  while (isName(toks[i])) {
    const name = unquote(toks[i].text).toLowerCase();
    i++;
    let columns: string[] | null = null;
    if (toks[i]?.text === "(") {
      const list = nameList(toks, i);
      columns = list.names;
      i = list.next;
    }
    if (isWord(toks[i], "AS")) i++;
    if (toks[i]?.text !== "(") break;
    const close = closing(toks, i);
    const query = inside(text, toks, i, close);
    ctes.set(name, { query, columns, refs: refsIn(query, ctes) });
    i = close + 1;
    if (toks[i]?.text !== ",") break;
    i++;
  }
  return { ctes, next: i };
}

/**
 * The tables a statement reads directly after FROM / JOIN (and comma lists after FROM), with
 * aliases, and its own CTEs. A subquery in FROM becomes a derived table named by its alias;
 * a name that is one of the statement's CTEs (or of ``scope``) carries that CTE.
 */
function parse(statement: string, scope: Map<string, Derived>): { refs: TableRef[]; own: Derived[] } {
  const toks = tokens(statement);
  const { ctes, next } = ctesOf(statement, toks, scope);
  const own = [...ctes.values()].filter((cte) => ![...scope.values()].includes(cte));
  const found: TableRef[] = [];
  const readRef = (at: number): number => {
    if (toks[at]?.text === "(") {
      const close = closing(toks, at);
      const query = inside(statement, toks, at, close);
      if (!/^\s*(SELECT|WITH|FROM|VALUES|TABLE)\b/i.test(query)) return readRef(at + 1); // (a JOIN b)
      let i = close + 1;
      if (isWord(toks[i], "AS") && isName(toks[i + 1])) i++;
      const alias = isName(toks[i]) ? unquote(toks[i++].text) : null;
      let columns: string[] | null = null;
      if (alias !== null && toks[i]?.text === "(") {
        const list = nameList(toks, i);
        columns = list.names;
        i = list.next;
      }
      const derived = { query, columns, refs: refsIn(query, ctes) };
      found.push({ path: alias ?? "", parts: alias ? [alias] : [], alias, derived });
      return i;
    }
    // a path: name (. name)*
    if (!isName(toks[at]) && !(toks[at]?.kind === "word")) return at;
    const parts: string[] = [];
    const raw: string[] = [];
    let i = at;
    while (toks[i] && (toks[i].kind === "ident" || toks[i].kind === "word")) {
      parts.push(unquote(toks[i].text));
      raw.push(toks[i].text);
      if (toks[i + 1]?.text === "." && toks[i + 2]) i += 2;
      else {
        i++;
        break;
      }
    }
    if (toks[i]?.text === "(") {
      // a table function such as range(…): no columns known here; skip it and its alias
      i = closing(toks, i) + 1;
      if (isWord(toks[i], "AS") && isName(toks[i + 1])) i++;
      return isName(toks[i]) ? i + 1 : i;
    }
    let alias: string | null = null;
    if (isWord(toks[i], "AS") && isName(toks[i + 1])) {
      alias = unquote(toks[i + 1].text);
      i += 2;
    } else if (isName(toks[i])) {
      alias = unquote(toks[i].text);
      i++;
    }
    const ref: TableRef = { path: raw.join("."), parts, alias };
    const cte = parts.length === 1 ? ctes.get(parts[0].toLowerCase()) : undefined;
    if (cte) ref.derived = cte;
    found.push(ref);
    return i;
  };
  for (let i = next; i < toks.length; i++) {
    const t = toks[i];
    if (t.kind !== "word") continue;
    const upper = t.text.toUpperCase();
    if (upper === "JOIN") {
      i = readRef(i + 1) - 1;
    } else if (upper === "FROM") {
      let j = readRef(i + 1);
      while (toks[j]?.text === ",") j = readRef(j + 1);
      i = j - 1;
    }
  }
  return { refs: found, own };
}

/** The tables a query reads directly (see ``parse``): what its `*` stands for. */
export function refsIn(query: string, scope: Map<string, Derived> = new Map()): TableRef[] {
  return parse(query, scope).refs;
}

/**
 * Every table a statement names, for column completion wherever the cursor is: the tables
 * it reads, then those inside its derived tables and CTEs (each once).
 */
export function tablesIn(statement: string): TableRef[] {
  const { refs, own } = parse(statement, new Map());
  const out: TableRef[] = [];
  const seen = new Set<Derived>();
  const walk = (list: TableRef[]) => {
    for (const ref of list) {
      out.push(ref);
      if (ref.derived && !seen.has(ref.derived)) {
        seen.add(ref.derived);
        walk(ref.derived.refs);
      }
    }
  };
  walk(refs);
  for (const cte of own) {
    if (!seen.has(cte)) {
      seen.add(cte);
      walk(cte.refs);
    }
  }
  return out;
}

/** One item of a SELECT list: an output column (maybe from a column reference) or a star. */
export type SelectItem =
  | { name: string; source: string[] | null }
  | { star: string[] };

const OPERATOR = /^[-+*/%|&^=<>!~:,.]$/;
const NOT_IMPLICIT_ALIAS = new Set(["END", "NULL", "TRUE", "FALSE", "DISTINCT", "ALL", "FROM"]);

/**
 * The output columns of a query's top-level SELECT list, as far as text shows them: `AS`
 * aliases and implicit ones, column references (`o.price` is `price`), stars with their
 * qualifier. An expression without an alias is left out (Spark names it by its text).
 */
export function selectItems(query: string): SelectItem[] {
  const toks = tokens(query);
  let i = ctesOf(query, toks, new Map()).next;
  let depth = 0;
  while (i < toks.length && !(depth === 0 && isWord(toks[i], "SELECT"))) {
    if (toks[i].text === "(") depth++;
    else if (toks[i].text === ")") depth--;
    i++;
  }
  i++;
  if (isWord(toks[i], "DISTINCT") || isWord(toks[i], "ALL")) i++;
  const items: Tok[][] = [[]];
  depth = 0;
  for (; i < toks.length; i++) {
    const t = toks[i];
    if (t.text === "(") depth++;
    else if (t.text === ")") depth--;
    if (depth < 0) break;
    if (depth === 0 && t.kind === "word" && NOT_ALIAS.has(t.text.toUpperCase()) && !isWord(t, "AS")) break;
    if (depth === 0 && t.text === ",") items.push([]);
    else items[items.length - 1].push(t);
  }
  const out: SelectItem[] = [];
  for (const item of items) {
    if (item.length === 0) continue;
    const last = item[item.length - 1];
    const before = item[item.length - 2];
    if (last.text === "*" && (item.length === 1 || before?.text === ".")) {
      out.push({ star: item.slice(0, -1).filter((t) => t.text !== ".").map((t) => unquote(t.text)) });
      continue;
    }
    const isPath = item.every((t, k) => (k % 2 === 0 ? t.kind === "word" || t.kind === "ident" : t.text === "."));
    if (isPath && item.length % 2 === 1) {
      const parts = item.filter((t) => t.text !== ".").map((t) => unquote(t.text));
      out.push({ name: parts[parts.length - 1], source: parts });
      continue;
    }
    if (item.length < 2 || !(last.kind === "ident" || last.kind === "word")) continue;
    if (isWord(before, "AS")) {
      out.push({ name: unquote(last.text), source: null });
    } else if (
      !NOT_IMPLICIT_ALIAS.has(last.text.toUpperCase()) &&
      !NOT_ALIAS.has(last.text.toUpperCase()) &&
      !(before.kind === "punct" && OPERATOR.test(before.text) && before.text !== ")")
    ) {
      out.push({ name: unquote(last.text), source: null });
    }
  }
  return out;
}

/**
 * The string index (UTF-16 code units, as JavaScript counts) of the `codePoints`-th code
 * point of `text` — the server counts offsets in code points (clamped into the text).
 */
export function indexOfCodePoint(text: string, codePoints: number): number {
  let index = 0;
  for (let seen = 0; seen < codePoints && index < text.length; seen++) {
    const unit = text.charCodeAt(index);
    index += unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length ? 2 : 1;
  }
  return index;
}

/** The 0-based offset of a 1-based line and column in `text` (clamped into the text). */
export function offsetOf(text: string, line: number, column: number): number {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const newline = text.indexOf("\n", offset);
    if (newline < 0) return text.length;
    offset = newline + 1;
  }
  const lineEnd = text.indexOf("\n", offset);
  const max = lineEnd < 0 ? text.length : lineEnd;
  return Math.min(offset + Math.max(column - 1, 0), max);
}

/**
 * Where an error at `line`/`column` (1-based, of the statement text that was sent) lies in
 * the whole editor text, given the offset where the sent text started.
 */
export function mapErrorPosition(sent: string, base: number, line: number, column: number): number {
  return base + offsetOf(sent, line, column);
}

/**
 * The offset in `after` corresponding to `pos` in `before` when only whitespace changed
 * (and keyword case): the same number of non-blank characters precede it.
 */
export function mapCursorThroughFormat(before: string, after: string, pos: number): number {
  let count = 0;
  for (let i = 0; i < pos && i < before.length; i++) if (!/\s/.test(before[i])) count++;
  if (count === 0) return 0;
  let seen = 0;
  for (let i = 0; i < after.length; i++) {
    if (!/\s/.test(after[i])) {
      seen++;
      if (seen === count) return i + 1;
    }
  }
  return after.length;
}

/** A one-line summary of SQL for lists. */
export const oneLine = (sql: string, max = 140): string => {
  const flat = sql.replace(/\s+/g, " ").trim();
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
};

/** Whether the `:` at `i` (code, not `::`) declares a struct field (`STRUCT<a: INT>`): the
 * word before it follows `<` or `,` inside an open `<`. */
function isFieldColon(code: string, i: number): boolean {
  const before = code.slice(0, i).replace(/\s+$/, "");
  const word = /[A-Za-z_][A-Za-z0-9_]*$|`[^`]*`$/.exec(before);
  if (!word) return false;
  const rest = before.slice(0, before.length - word[0].length).replace(/\s+$/, "");
  const last = rest[rest.length - 1];
  if (last !== "<" && last !== ",") return false;
  let depth = 0;
  for (let j = rest.length - 1; j >= 0; j--) {
    const ch = rest[j];
    if (ch === ">") depth++;
    else if (ch === "<") {
      if (depth === 0) return true;
      depth--;
    } else if (ch === "(" || ch === ")" || ch === ";") return false;
  }
  return false;
}

/** The named parameter markers (`:name`) of `sql`, each name once, in order of first use.
 * Strings, comments, quoted names and `::` casts are not markers (as the server reads them). */
export function parameterNames(sql: string): string[] {
  // The text with every string, comment and quoted name blanked out (offsets kept).
  let code = "";
  let i = 0;
  while (i < sql.length) {
    if (isQuoteStart(sql, i)) {
      const end = Math.max(skipQuoted(sql, i), i + 1);
      code += " ".repeat(end - i);
      i = end;
    } else {
      code += sql[i];
      i++;
    }
  }
  const names: string[] = [];
  const marker = /:(\s*)([A-Za-z_][A-Za-z0-9_]*)/g;
  for (let found = marker.exec(code); found; found = marker.exec(code)) {
    const at = found.index;
    if (code[at - 1] === ":" || code[at + 1] === ":") continue;
    if (isFieldColon(code, at)) continue;
    if (!names.includes(found[2])) names.push(found[2]);
  }
  return names;
}

/** A parameter's value as sent: `auto` sends a number when the text is one, else the text;
 * `text` always the text; `null` SQL NULL. */
export type ParameterMode = "auto" | "text" | "null";

export function parameterValue(text: string, mode: ParameterMode): string | number | null {
  if (mode === "null") return null;
  if (mode === "text") return text;
  const trimmed = text.trim();
  // An integer beyond what a double holds exactly goes as text (Spark casts it as needed).
  if (/^-?\d+$/.test(trimmed)) return Number.isSafeInteger(Number(trimmed)) ? Number(trimmed) : text;
  if (/^-?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$/.test(trimmed) && Number.isFinite(Number(trimmed))) return Number(trimmed);
  return text;
}
