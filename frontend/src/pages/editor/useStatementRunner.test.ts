import { describe, expect, it } from "vitest";

import { pickStatements } from "./useStatementRunner";

const cursor = (at: number) => ({ from: at, to: at, head: at, empty: true });

describe("pickStatements", () => {
  const doc = "SELECT 1;\nSELECT 2;\n";

  it("runs the statement at the cursor, placed where it starts", () => {
    expect(pickStatements(doc, cursor(12), "statement")).toEqual({ sent: "SELECT 2", base: 10, script: false });
  });

  it("runs the whole text as a script with Run all", () => {
    expect(pickStatements(doc, cursor(0), "all")).toEqual({ sent: doc, base: 0, script: true });
  });

  it("runs the selection, a single statement trimmed to itself", () => {
    const selection = { from: 10, to: 19, head: 19, empty: false };
    expect(pickStatements(doc, selection, "statement")).toEqual({ sent: "SELECT 2", base: 10, script: false });
  });

  it("has nothing to run in an empty text", () => {
    expect(pickStatements("  \n", cursor(1), "all")).toBeNull();
  });
});
