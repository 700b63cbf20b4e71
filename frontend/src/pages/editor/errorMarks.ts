// Where a failed job's error lies in the editor: the range to underline (from the error's
// `details.span`, else its `line`/`column`, both of the statement that was sent), and the
// failing statement of a script, highlighted line by line until the text changes.
import { RangeSetBuilder, StateEffect, StateField, type Extension } from "@codemirror/state";
import { Decoration, EditorView, type DecorationSet } from "@codemirror/view";
import { indexOfCodePoint, offsetOf } from "./sqlText";

/** The error's place as the server reports it (docs/api.md, "Where an error lies"). */
export interface ErrorPlace {
  line?: unknown;
  column?: unknown;
  span?: unknown;
}

const isCount = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

/**
 * The editor range `[from, to)` of an error in `sql` (the statement sent, starting at `base`
 * in a document of `docLength` characters), or null when the error has no usable place.
 * A span or line outside the statement is ignored or clamped, never trusted.
 */
export function errorRange(sql: string, base: number, details: ErrorPlace | null | undefined, docLength: number): { from: number; to: number } | null {
  if (!details || !isCount(base) || base > docLength) return null;
  const limit = Math.min(docLength, base + sql.length);
  const span = details.span;
  if (Array.isArray(span) && span.length === 2 && isCount(span[0]) && isCount(span[1]) && span[0] < span[1]) {
    const from = base + indexOfCodePoint(sql, span[0]);
    const to = base + indexOfCodePoint(sql, span[1]);
    if (from < limit) return { from, to: Math.min(Math.max(to, from + 1), limit) };
  }
  if (!isCount(details.line) || details.line < 1) return null;
  const column = isCount(details.column) && details.column >= 1 ? details.column : 1;
  const from = Math.min(base + offsetOf(sql, details.line, column), limit);
  // The word at the place (at least one character, within the statement's text).
  let to = from;
  while (to < limit && /\S/.test(sql[to - base] ?? "")) to++;
  if (to === from) {
    if (from < limit) return { from, to: from + 1 };
    return from > base ? { from: from - 1, to: from } : { from, to: Math.min(from + 1, docLength) };
  }
  return { from, to };
}

/** Where a failed statement's error was marked: the editor line (1-based) of the error, or
 * of the statement when the error has no place; `statement` is its number in a script. */
export interface ErrorAt {
  line: number;
  statement: number | null;
}

/** Where the error is in the editor: "Statement 3, line 6" in a script, else "Line 6". */
export function errorAtText(at: ErrorAt): string {
  return at.statement !== null ? `Statement ${at.statement}, line ${at.line}` : `Line ${at.line}`;
}

/** Highlight the lines of `[from, to)` as the statement that failed (null: none). */
export const markFailedStatement = StateEffect.define<{ from: number; to: number } | null>();

const failedLine = Decoration.line({ class: "cm-failedStatement", attributes: { "data-failed-statement": "true" } });

function linesOf(view: { doc: EditorView["state"]["doc"] }, from: number, to: number): DecorationSet {
  const builder = new RangeSetBuilder<Decoration>();
  const end = Math.min(Math.max(to, from), view.doc.length);
  const start = Math.min(from, end);
  for (let pos = start; pos <= end; ) {
    const line = view.doc.lineAt(pos);
    builder.add(line.from, line.from, failedLine);
    if (line.to >= end) break;
    pos = line.to + 1;
  }
  return builder.finish();
}

const failedStatementField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(value, transaction) {
    for (const effect of transaction.effects)
      if (effect.is(markFailedStatement))
        value = effect.value ? linesOf(transaction.state, effect.value.from, effect.value.to) : Decoration.none;
    // Any edit ends the highlight: it no longer says what ran.
    return transaction.docChanged ? Decoration.none : value;
  },
  provide: (field) => EditorView.decorations.from(field),
});

export function failedStatementHighlight(): Extension {
  return [
    failedStatementField,
    EditorView.baseTheme({
      ".cm-failedStatement": { backgroundColor: "rgba(220, 38, 38, 0.10)", boxShadow: "inset 3px 0 0 #dc2626" },
    }),
  ];
}
