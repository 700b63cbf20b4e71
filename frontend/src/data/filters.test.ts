import { describe, expect, it } from "vitest";
import { choicesFromText, inOrder, listParam, localToIso, searchOf, textParam, toggleChoice } from "./filters";

const ORDER = ["A", "B", "C"] as const;

describe("filter helpers", () => {
  it("turn a datetime-local value into an instant, and nothing for blank or invalid", () => {
    expect(localToIso("2024-05-01T13:30")).toMatch(/^2024-05-01T\d\d:30:00\.000Z$/);
    expect(localToIso("")).toBeUndefined();
    expect(localToIso("not a date")).toBeUndefined();
  });

  it("keep the known choices of a comma list, normalised, in the order given", () => {
    expect(choicesFromText("c, a,bogus", ORDER, (part) => part.toUpperCase())).toEqual(["C", "A"]);
    expect(choicesFromText("", ORDER)).toEqual([]);
  });

  it("put choices in the server's order and toggle one", () => {
    expect(inOrder(["C", "A", "A"], ORDER)).toEqual(["A", "C"]);
    expect(toggleChoice(["C"], "A", true, ORDER)).toEqual(["A", "C"]);
    expect(toggleChoice(["A", "C"], "A", false, ORDER)).toEqual(["C"]);
  });

  it("build parameters from the set values only, keys in a stable order", () => {
    expect(textParam("  x ")).toBe("x");
    expect(textParam("   ")).toBeUndefined();
    expect(listParam([])).toBeUndefined();
    expect(listParam(["A", "B"])).toBe("A,B");
    expect(searchOf({ b: "2", a: undefined, c: "", d: "x y" })).toBe("?b=2&d=x+y");
    expect(searchOf({ a: undefined })).toBe("");
  });
});
