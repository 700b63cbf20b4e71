import { describe, expect, it } from "vitest";
import { gridArea, nextPlace, parameterValues, typedValue } from "./dashboards";

describe("dashboards", () => {
  it("places a tile on 1-based grid lines", () => {
    expect(gridArea({ x: 0, y: 0, w: 6, h: 4 })).toEqual({ gridColumn: "1 / span 6", gridRow: "1 / span 4" });
    expect(gridArea({ x: 6, y: 3, w: 6, h: 2 })).toEqual({ gridColumn: "7 / span 6", gridRow: "4 / span 2" });
  });

  it("types an input as its parameter's default", () => {
    expect(typedValue("7", 3)).toBe(7);
    expect(typedValue("seven", 3)).toBe("seven");
    expect(typedValue("", 3)).toBe("");
    expect(typedValue("true", false)).toBe(true);
    expect(typedValue("12", "EU")).toBe("12");
  });

  it("sends every declared parameter: the input, or the default", () => {
    const declared = [
      { name: "low", default: 2 },
      { name: "region", default: "EU" },
    ];
    expect(parameterValues(declared, { low: "5" })).toEqual({ low: 5, region: "EU" });
    expect(parameterValues(declared, { other: "x" })).toEqual({ low: 2, region: "EU" });
  });

  it("puts a new tile beside the last one when it fits, else under them all", () => {
    expect(nextPlace([], 6)).toEqual({ x: 0, y: 0 });
    expect(nextPlace([{ x: 0, y: 0, w: 6, h: 4 }], 6)).toEqual({ x: 6, y: 0 });
    expect(nextPlace([{ x: 0, y: 0, w: 6, h: 4 }], 12)).toEqual({ x: 0, y: 4 });
    const full = [
      { x: 0, y: 0, w: 6, h: 4 },
      { x: 6, y: 0, w: 6, h: 3 },
    ];
    expect(nextPlace(full, 4)).toEqual({ x: 0, y: 4 });
  });
});
