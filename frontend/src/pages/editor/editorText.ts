// The text in each tab's editor, which the tab itself holds only after a short pause in typing:
// the page's unload flush reads it from here, so that a reload inside that pause keeps it.
import type { TabMeta } from "./types";

const editors = new Map<string, () => string | undefined>();

/** A pane's editor, readable until the pane goes (the returned function forgets it). */
export function registerEditor(tabId: string, text: () => string | undefined): () => void {
  editors.set(tabId, text);
  return () => {
    if (editors.get(tabId) === text) editors.delete(tabId);
  };
}

/** The tabs with the text their editors hold now. */
export function withEditorText(tabs: TabMeta[]): TabMeta[] {
  return tabs.map((tab) => {
    const text = editors.get(tab.id)?.();
    return text === undefined || text === tab.sql ? tab : { ...tab, sql: text };
  });
}
