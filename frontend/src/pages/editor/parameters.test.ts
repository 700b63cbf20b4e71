import { describe, expect, it } from "vitest";
import { parameterNames, parameterValue } from "./sqlText";
import { parameterEntries } from "./types";

describe("parameterNames", () => {
  it("finds markers in order, once each", () => {
    expect(parameterNames("SELECT * FROM t WHERE qty > :min_qty AND x < :max OR y = :min_qty")).toEqual(["min_qty", "max"]);
  });
  it("skips strings, comments, quoted names, casts and struct fields", () => {
    expect(parameterNames("SELECT ':a', `:b`, x::int /* :c */ -- :d\n, CAST(NULL AS STRUCT<e:INT, f: STRING>), : g")).toEqual(["g"]);
  });
});

describe("parameterValue", () => {
  it("sends numbers as numbers in auto mode, text otherwise", () => {
    expect(parameterValue("10", "auto")).toBe(10);
    expect(parameterValue("1.5", "auto")).toBe(1.5);
    expect(parameterValue("1; DROP TABLE x", "auto")).toBe("1; DROP TABLE x");
    expect(parameterValue("10", "text")).toBe("10");
    expect(parameterValue("x", "null")).toBeNull();
    expect(parameterValue("99999999999999999999", "auto")).toBe("99999999999999999999");
  });
});

describe("parameterEntries", () => {
  it("turns a job's values back into inputs", () => {
    expect(parameterEntries({ n: 5, s: "5", z: null })).toEqual({
      n: { value: "5", mode: "auto" },
      s: { value: "5", mode: "text" },
      z: { value: "", mode: "null" },
    });
  });
});
