// The SQL editor: tabs (each with its own server session), kept in localStorage per user,
// and opened from other pages through store.openInEditor.
import { useCallback, useEffect, useRef, useState, type KeyboardEvent } from "react";
import { del, enc, type User } from "../../api";
import { useTitle } from "../../router";
import { onOpenInEditor } from "../../store";
import { TabPane } from "./TabPane";
import { newId, type TabMeta, type TabOpen } from "./types";
import "./editor.css";

interface Stored {
  tabs: TabMeta[];
  active: string;
}

const storageKey = (user: User) => `tessera.editor.v1.${user.username}`;

function load(user: User): Stored {
  try {
    const raw = localStorage.getItem(storageKey(user));
    if (raw) {
      const data = JSON.parse(raw) as Partial<Stored>;
      const tabs = (data.tabs ?? []).filter(
        (tab): tab is TabMeta => !!tab && typeof tab.id === "string" && typeof tab.sql === "string",
      ).map((tab) => ({
        id: tab.id,
        title: typeof tab.title === "string" && tab.title ? tab.title : "Query",
        sql: tab.sql,
        sessionId: typeof tab.sessionId === "string" ? tab.sessionId : null,
        savedQueryId: typeof tab.savedQueryId === "string" ? tab.savedQueryId : null,
      }));
      if (tabs.length > 0)
        return { tabs, active: tabs.some((tab) => tab.id === data.active) ? data.active! : tabs[0].id };
    }
  } catch {
    // unreadable storage: start afresh
  }
  const first: TabMeta = { id: newId(), title: "Query 1", sql: "", sessionId: null, savedQueryId: null };
  return { tabs: [first], active: first.id };
}

function nextTitle(tabs: TabMeta[]): string {
  let n = tabs.length + 1;
  const titles = new Set(tabs.map((tab) => tab.title));
  while (titles.has(`Query ${n}`)) n++;
  return `Query ${n}`;
}

export function EditorPage({ user, active }: { user: User; active: boolean }) {
  const [state, setState] = useState<Stored>(() => load(user));
  const [opens, setOpens] = useState<Record<string, TabOpen>>({});
  const [renaming, setRenaming] = useState<string | null>(null);
  const [historyKey, setHistoryKey] = useState(0);
  const { tabs, active: activeId } = state;
  const activeTab = tabs.find((tab) => tab.id === activeId) ?? tabs[0];
  useTitle(active ? activeTab.title : "");

  // Persist (debounced) per user.
  useEffect(() => {
    const timer = setTimeout(() => localStorage.setItem(storageKey(user), JSON.stringify(state)), 150);
    return () => clearTimeout(timer);
  }, [state, user]);
  // Flush on unload so a reload right after typing keeps the text.
  const latest = useRef(state);
  useEffect(() => {
    latest.current = state;
  }, [state]);
  useEffect(() => {
    const flush = () => localStorage.setItem(storageKey(user), JSON.stringify(latest.current));
    window.addEventListener("beforeunload", flush);
    return () => window.removeEventListener("beforeunload", flush);
  }, [user]);

  const update = useCallback((id: string, change: Partial<TabMeta>) => {
    setState((current) => ({
      ...current,
      tabs: current.tabs.map((tab) => (tab.id === id ? { ...tab, ...change } : tab)),
    }));
  }, []);

  const addTab = useCallback((sql = "", title?: string, open?: TabOpen) => {
    const id = newId();
    setState((current) => ({
      tabs: [
        ...current.tabs,
        { id, title: title || nextTitle(current.tabs), sql, sessionId: null, savedQueryId: null },
      ],
      active: id,
    }));
    if (open) setOpens((current) => ({ ...current, [id]: open }));
  }, []);

  const closeTab = (id: string) => {
    const closing = tabs.find((tab) => tab.id === id);
    if (closing?.sessionId) del(`/sessions/${enc(closing.sessionId)}`).catch(() => undefined);
    setState((current) => {
      const index = current.tabs.findIndex((tab) => tab.id === id);
      const rest = current.tabs.filter((tab) => tab.id !== id);
      if (rest.length === 0) {
        const fresh: TabMeta = { id: newId(), title: "Query 1", sql: "", sessionId: null, savedQueryId: null };
        return { tabs: [fresh], active: fresh.id };
      }
      const active = current.active === id ? rest[Math.max(0, index - 1)].id : current.active;
      return { tabs: rest, active };
    });
  };

  useEffect(
    () =>
      onOpenInEditor((request) =>
        addTab(request.sql, request.title, {
          run: request.run,
          catalog: request.catalog,
          database: request.database,
        }),
      ),
    [addTab],
  );

  const onTabKey = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.key !== "ArrowRight" && event.key !== "ArrowLeft") return;
    const index = tabs.findIndex((tab) => tab.id === activeTab.id);
    const next = tabs[(index + (event.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length];
    setState((current) => ({ ...current, active: next.id }));
    document.getElementById(`tab-${next.id}`)?.focus();
  };

  const onJobDone = useCallback(() => setHistoryKey((key) => key + 1), []);

  return (
    <div className="editor-page" data-active={active}>
      <div className="tab-strip" role="tablist" aria-label="Editor tabs" onKeyDown={onTabKey}>
        {tabs.map((tab) => {
          const selected = tab.id === activeTab.id;
          return (
            <div key={tab.id} className={`tab${selected ? " active" : ""}`} data-testid="editor-tab">
              {renaming === tab.id ? (
                <input
                  className="tab-rename"
                  aria-label="Tab name"
                  defaultValue={tab.title}
                  autoFocus
                  onBlur={(event) => {
                    const title = event.target.value.trim();
                    if (title) update(tab.id, { title });
                    setRenaming(null);
                  }}
                  onKeyDown={(event) => {
                    if (event.key === "Enter") (event.target as HTMLInputElement).blur();
                    if (event.key === "Escape") setRenaming(null);
                  }}
                />
              ) : (
                <button
                  type="button"
                  role="tab"
                  id={`tab-${tab.id}`}
                  aria-selected={selected}
                  tabIndex={selected ? 0 : -1}
                  className="tab-title"
                  title="Double-click (or F2) to rename"
                  onClick={() => setState((current) => ({ ...current, active: tab.id }))}
                  onDoubleClick={() => setRenaming(tab.id)}
                  onKeyDown={(event) => {
                    if (event.key === "F2") setRenaming(tab.id);
                  }}
                >
                  {tab.title}
                </button>
              )}
              <button
                type="button"
                className="tab-close"
                aria-label={`Close ${tab.title}`}
                title="Close tab"
                onClick={() => closeTab(tab.id)}
              >
                ×
              </button>
            </div>
          );
        })}
        <button type="button" className="tab-add" aria-label="New tab" title="New tab" onClick={() => addTab()}>
          +
        </button>
      </div>
      {tabs.map((tab) => (
        <TabPane
          key={tab.id}
          tab={tab}
          visible={active && tab.id === activeTab.id}
          open={opens[tab.id]}
          onUpdate={update}
          onOpenTab={(sql, title) => addTab(sql, title)}
          historyKey={historyKey}
          onJobDone={onJobDone}
        />
      ))}
    </div>
  );
}
