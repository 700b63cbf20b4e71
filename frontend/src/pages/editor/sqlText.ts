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
  let i = pos;
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
  /** The path as written (raw SQL text), e.g. "demo.sales.orders". */
  path: string;
  parts: string[];
  alias: string | null;
}

const NOT_ALIAS = new Set(
  (
    "WHERE GROUP ORDER BY HAVING LIMIT JOIN INNER LEFT RIGHT FULL OUTER CROSS SEMI ANTI ON " +
    "USING UNION INTERSECT EXCEPT MINUS WINDOW LATERAL NATURAL CLUSTER DISTRIBUTE SORT " +
    "TABLESAMPLE PIVOT UNPIVOT QUALIFY OFFSET FETCH FOR SELECT FROM INTO VALUES WITH AS SET"
  ).split(" "),
);

type Tok = { kind: "word" | "ident" | "punct" | "other"; text: string };

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
      if (ch === "`") out.push({ kind: "ident", text: text.slice(i, end) });
      else if (!isComment(text, i)) out.push({ kind: "other", text: text.slice(i, end) });
      i = end;
      continue;
    }
    if (/[A-Za-z_]/.test(ch)) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_$]/.test(text[j])) j++;
      out.push({ kind: "word", text: text.slice(i, j) });
      i = j;
      continue;
    }
    out.push({ kind: "punct", text: ch });
    i++;
  }
  return out;
}

/** The tables a statement names after FROM / JOIN (and comma lists after FROM), with aliases. */
export function tablesIn(statement: string): TableRef[] {
  const toks = tokens(statement);
  const found: TableRef[] = [];
  const isName = (t: Tok | undefined) =>
    !!t && (t.kind === "ident" || (t.kind === "word" && !NOT_ALIAS.has(t.text.toUpperCase())));
  const readRef = (at: number): number => {
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
    if (toks[i]?.text === "(") return i; // a table function such as range(…)
    let alias: string | null = null;
    if (toks[i]?.kind === "word" && toks[i].text.toUpperCase() === "AS" && isName(toks[i + 1])) {
      alias = unquote(toks[i + 1].text);
      i += 2;
    } else if (isName(toks[i])) {
      alias = unquote(toks[i].text);
      i++;
    }
    found.push({ path: raw.join("."), parts, alias });
    return i;
  };
  for (let i = 0; i < toks.length; i++) {
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
  return found;
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
