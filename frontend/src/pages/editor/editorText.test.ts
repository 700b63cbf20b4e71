import { describe, expect, it } from "vitest";
import { registerEditor, withEditorText } from "./editorText";
import type { TabMeta } from "./types";

const tab = (id: string, sql: string): TabMeta => ({ id, title: id, sql, sessionId: null, savedQueryId: null, version: 1 });

describe("the text in a tab's editor", () => {
  it("is what the unload flush stores, until the pane goes", () => {
    const tabs = [tab("a", "SELECT 1"), tab("b", "")];
    let doc = "SELECT 2";
    const forget = registerEditor("b", () => doc);
    expect(withEditorText(tabs).map((t) => t.sql)).toEqual(["SELECT 1", "SELECT 2"]);
    doc = "";
    expect(withEditorText(tabs)[1]).toBe(tabs[1]);
    forget();
    doc = "SELECT 3";
    expect(withEditorText(tabs).map((t) => t.sql)).toEqual(["SELECT 1", ""]);
  });
});
