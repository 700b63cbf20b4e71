import { describe, expect, it } from "vitest";
import { EditorState } from "@codemirror/state";
import { EditorView, type DecorationSet } from "@codemirror/view";

import { errorAtText, errorRange, failedStatementHighlight, markFailedStatement } from "./errorMarks";
import { pickStatements } from "./useStatementRunner";

// A script whose third statement (editor lines 4–6) has an unresolved column on line 6.
const doc = "SELECT 1;\nSELECT 2;\n\nSELECT id,\n  name\nFROM t WHERE qtty > 1;\n";
const third = "SELECT id,\n  name\nFROM t WHERE qtty > 1";
const base = doc.indexOf(third);

describe("errorRange", () => {
  it("underlines the span the server reports, placed by the statement's offset", () => {
    const span = [third.indexOf("qtty"), third.indexOf("qtty") + 4];
    const range = errorRange(third, base, { line: 3, column: 14, span }, doc.length);
    expect(range).not.toBeNull();
    expect(doc.slice(range!.from, range!.to)).toBe("qtty");
    expect(EditorState.create({ doc }).doc.lineAt(range!.from).number).toBe(6);
  });

  it("falls back to line and column (the word there) without a span", () => {
    const range = errorRange(third, base, { line: 3, column: 14 }, doc.length);
    expect(doc.slice(range!.from, range!.to)).toBe("qtty");
  });

  it("counts a span in code points, as the server does", () => {
    const sql = "SELECT '😀', qtty";
    const range = errorRange(sql, 0, { span: [12, 16] }, sql.length);
    expect(sql.slice(range!.from, range!.to)).toBe("qtty");
  });

  it("keeps a position outside the text inside the statement, or ignores it", () => {
    // hostile or stale places: never outside the statement, never a throw
    for (const details of [
      { span: [10_000, 20_000] },
      { span: [-5, 3], line: 99, column: 99 },
      { span: "0,4", line: 3, column: 1e9 },
      { span: [4, 2], line: 1e12 },
    ]) {
      const range = errorRange(third, base, details, doc.length);
      if (range) {
        expect(range.from).toBeGreaterThanOrEqual(base);
        expect(range.to).toBeLessThanOrEqual(base + third.length);
        expect(range.from).toBeLessThan(range.to);
      }
    }
    expect(errorRange(third, base, { line: -1 }, doc.length)).toBeNull();
    expect(errorRange(third, base, { line: "3" }, doc.length)).toBeNull();
    expect(errorRange(third, base, null, doc.length)).toBeNull();
    expect(errorRange(third, 10_000, { line: 1, column: 1 }, doc.length)).toBeNull();
  });
});

/** The editor lines the failed-statement highlight covers. */
function highlighted(state: EditorState): number[] {
  const lines: number[] = [];
  for (const source of state.facet(EditorView.decorations)) {
    if (typeof source === "function") continue;
    (source as DecorationSet).between(0, state.doc.length, (from) => {
      lines.push(state.doc.lineAt(from).number);
    });
  }
  return lines;
}

describe("the failed statement", () => {
  it("is highlighted line by line, and the highlight ends with an edit", () => {
    let state = EditorState.create({ doc, extensions: [failedStatementHighlight()] });
    state = state.update({ effects: markFailedStatement.of({ from: base, to: base + third.length }) }).state;
    expect(highlighted(state)).toEqual([4, 5, 6]);
    // a hostile range past the end does not throw: it ends at the text's end
    state = state.update({ effects: markFailedStatement.of({ from: 5, to: 1e9 }) }).state;
    expect(highlighted(state)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    state = state.update({ changes: { from: 0, insert: "-- x\n" } }).state;
    expect(highlighted(state)).toEqual([]);
  });

  it("names its editor line", () => {
    expect(errorAtText({ line: 6, statement: 3 })).toBe("Statement 3, line 6");
    expect(errorAtText({ line: 2, statement: null })).toBe("Line 2");
  });

  it("is found where Run all sends the script", () => {
    expect(pickStatements(doc, { from: 0, to: 0, head: 0, empty: true }, "all")).toEqual({ sent: doc, base: 0, script: true });
  });
});
