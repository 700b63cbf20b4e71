import { describe, expect, it } from "vitest";
import {
  DEFAULT_LAYOUT,
  MAX_EDITOR_PERCENT,
  MIN_EDITOR_PERCENT,
  clampPercent,
  parseLayout,
  percentAfterKey,
  percentAtPointer,
} from "./layout";

describe("the stored layout", () => {
  it("reads what was kept", () => {
    expect(parseLayout(JSON.stringify({ editorPercent: 55, sideOpen: false }))).toEqual({ editorPercent: 55, sideOpen: false });
  });

  it("is the default when nothing, or nothing readable, was kept", () => {
    expect(parseLayout(null)).toEqual(DEFAULT_LAYOUT);
    expect(parseLayout("{not json")).toEqual(DEFAULT_LAYOUT);
    expect(parseLayout("null")).toEqual(DEFAULT_LAYOUT);
    expect(parseLayout(JSON.stringify({ editorPercent: "wide", sideOpen: "yes" }))).toEqual(DEFAULT_LAYOUT);
  });

  it("keeps a stored share within the bounds", () => {
    expect(parseLayout(JSON.stringify({ editorPercent: 400 })).editorPercent).toBe(MAX_EDITOR_PERCENT);
    expect(parseLayout(JSON.stringify({ editorPercent: -3 })).editorPercent).toBe(MIN_EDITOR_PERCENT);
    expect(clampPercent(Number.NaN)).toBe(DEFAULT_LAYOUT.editorPercent);
  });
});

describe("the separator", () => {
  it("moves by a step per arrow key, further with Page keys, to the ends with Home and End", () => {
    expect(percentAfterKey(40, "ArrowDown")).toBe(45);
    expect(percentAfterKey(40, "ArrowUp")).toBe(35);
    expect(percentAfterKey(40, "PageDown")).toBe(60);
    expect(percentAfterKey(40, "Home")).toBe(MIN_EDITOR_PERCENT);
    expect(percentAfterKey(40, "End")).toBe(MAX_EDITOR_PERCENT);
  });

  it("stops at the bounds and leaves other keys alone", () => {
    expect(percentAfterKey(MAX_EDITOR_PERCENT, "ArrowDown")).toBe(MAX_EDITOR_PERCENT);
    expect(percentAfterKey(MIN_EDITOR_PERCENT + 2, "ArrowUp")).toBe(MIN_EDITOR_PERCENT);
    expect(percentAfterKey(40, "ArrowLeft")).toBeNull();
    expect(percentAfterKey(40, "a")).toBeNull();
  });

  it("follows the pointer as a share of the pane", () => {
    expect(percentAtPointer(300, 100, 400)).toBe(50);
    expect(percentAtPointer(0, 100, 400)).toBe(MIN_EDITOR_PERCENT);
    expect(percentAtPointer(600, 100, 400)).toBe(MAX_EDITOR_PERCENT);
    expect(percentAtPointer(300, 100, 0)).toBe(DEFAULT_LAYOUT.editorPercent);
  });
});
