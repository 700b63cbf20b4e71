// The SQL editor: tabs (each with its own server session), kept on the server per user
// (useServerTabs; localStorage is a cache for the first paint), and opened from other pages
// through store.openInEditor.
import { useCallback, useEffect, useRef, useState, type KeyboardEvent } from "react";
import { del, enc, type User } from "../../api";
import { useTitle } from "../../router";
import { onOpenInEditor } from "../../store";
import { withEditorText } from "./editorText";
import { TabPane } from "./TabPane";
import { layoutKey, parseLayout, type EditorLayout } from "./layout";
import { cleanRowLimit, isUuid, newId, type ParameterEntry, type PendingRun, type TabMeta, type TabOpen } from "./types";
import { freshTab, useServerTabs, type Stored, type TabSync } from "./useServerTabs";
import "./editor.css";

const storageKey = (user: User) => `tessera.editor.v1.${user.username}`;

function load(user: User): Stored {
  try {
    const raw = localStorage.getItem(storageKey(user));
    if (raw) {
      const data = JSON.parse(raw) as Partial<Stored>;
      const tabs = (data.tabs ?? []).filter(
        (tab): tab is TabMeta => !!tab && typeof tab.id === "string" && typeof tab.sql === "string",
      ).map((tab) => ({
        // Ids from before tabs were kept on the server were not UUIDs: such a tab is new to it.
        id: isUuid(tab.id) ? tab.id : newId(),
        version: isUuid(tab.id) && typeof tab.version === "number" ? tab.version : null,
        serverSql: typeof tab.serverSql === "string" ? tab.serverSql : undefined,
        title: typeof tab.title === "string" && tab.title ? tab.title : "Query",
        sql: tab.sql,
        sessionId: typeof tab.sessionId === "string" ? tab.sessionId : null,
        savedQueryId: typeof tab.savedQueryId === "string" ? tab.savedQueryId : null,
        params: cleanParams(tab.params),
        rowLimit: cleanRowLimit(tab.rowLimit),
        lastJobId: typeof tab.lastJobId === "string" ? tab.lastJobId : null,
        pendingRun: cleanPending(tab.pendingRun),
        savedSql: typeof tab.savedSql === "string" ? tab.savedSql : null,
        catalog: typeof tab.catalog === "string" ? tab.catalog : null,
        database: typeof tab.database === "string" ? tab.database : null,
      }));
      if (tabs.length > 0)
        return { tabs, active: tabs.some((tab) => tab.id === data.active) ? data.active! : tabs[0].id };
    }
  } catch {
    // unreadable storage: start afresh
  }
  const first = freshTab();
  return { tabs: [first], active: first.id };
}

/** A stored pending run, when well-formed. */
function cleanPending(raw: unknown): PendingRun | null {
  const { sql, sentAt } = (raw ?? {}) as Partial<PendingRun>;
  return typeof sql === "string" && typeof sentAt === "string" ? { sql, sentAt } : null;
}

/** Stored parameter inputs, keeping only well-formed entries. */
function cleanParams(raw: unknown): Record<string, ParameterEntry> {
  const out: Record<string, ParameterEntry> = {};
  if (!raw || typeof raw !== "object") return out;
  for (const [name, entry] of Object.entries(raw as Record<string, unknown>)) {
    const { value, mode } = (entry ?? {}) as Partial<ParameterEntry>;
    if (typeof value === "string" && (mode === "auto" || mode === "text" || mode === "null")) out[name] = { value, mode };
  }
  return out;
}

const MAX_CLOSED = 20;
const TOAST_MS = 10_000;

/** SQL typed in a tab that is not the text of its saved query. */
export function hasUnsavedSql(tab: TabMeta): boolean {
  return tab.sql.trim() !== "" && tab.sql !== (tab.savedSql ?? null);
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
  // The splitter's share and the side panel: the user's, kept in localStorage, in every tab.
  const [layout, setLayout] = useState<EditorLayout>(() => parseLayout(localStorage.getItem(layoutKey(user.username))));
  useEffect(() => {
    localStorage.setItem(layoutKey(user.username), JSON.stringify(layout));
  }, [layout, user]);
  const changeLayout = useCallback((change: Partial<EditorLayout>) => setLayout((now) => ({ ...now, ...change })), []);
  const { syncOf } = useServerTabs(state, setState);
  const { tabs, active: activeId } = state;
  const activeTab = tabs.find((tab) => tab.id === activeId) ?? tabs[0];
  useTitle(active ? activeTab.title : "");

  // Persist per user at most 150 ms after a change. The timer is not restarted by later changes:
  // a tab that changes more often than that (a busy page) is still written.
  const latest = useRef(state);
  const saveTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => {
    latest.current = state;
    if (saveTimer.current !== null) return;
    saveTimer.current = setTimeout(() => {
      saveTimer.current = null;
      localStorage.setItem(storageKey(user), JSON.stringify(latest.current));
    }, 150);
  }, [state, user]);
  // Flush on unload so a reload right after typing keeps the text (also the text an editor has
  // not written back to its tab yet).
  useEffect(() => {
    const flush = () => {
      const { tabs, active } = latest.current;
      localStorage.setItem(storageKey(user), JSON.stringify({ tabs: withEditorText(tabs), active }));
    };
    window.addEventListener("beforeunload", flush);
    window.addEventListener("pagehide", flush); // also where beforeunload is not sent
    return () => {
      window.removeEventListener("beforeunload", flush);
      window.removeEventListener("pagehide", flush);
    };
  }, [user]);

  const update = useCallback((id: string, change: Partial<TabMeta>) => {
    setState((current) => ({
      ...current,
      tabs: current.tabs.map((tab) => (tab.id === id ? { ...tab, ...change } : tab)),
    }));
  }, []);

  const addTab = useCallback(
    (sql = "", title?: string, open?: TabOpen, savedQueryId: string | null = null, params?: Record<string, ParameterEntry>) => {
    const id = newId();
    setState((current) => ({
      tabs: [
        ...current.tabs,
        {
          id,
          title: title || nextTitle(current.tabs),
          sql,
          sessionId: null,
          savedQueryId,
          version: null,
          savedSql: savedQueryId ? sql : null,
          params: params ?? {},
        },
      ],
      active: id,
    }));
    if (open) setOpens((current) => ({ ...current, [id]: open }));
  },
  [],
  );

  /** A saved query: its linked tab is focused when there is one (unless a new tab is asked). */
  const openSaved = useCallback(
    (sql: string, title: string | undefined, savedQueryId: string, newTab: boolean, open: TabOpen) => {
      const linked = newTab ? undefined : latest.current.tabs.find((tab) => tab.savedQueryId === savedQueryId);
      if (linked) setState((current) => ({ ...current, active: linked.id }));
      else addTab(sql, title, open, savedQueryId);
    },
    [addTab],
  );

  // Closed tabs, newest last, to reopen (the toast's Undo, the ↺ button, Alt+Shift+T).
  const [closed, setClosed] = useState<TabMeta[]>([]);
  const [toast, setToast] = useState<TabMeta | null>(null);
  useEffect(() => {
    if (!toast) return;
    const timer = setTimeout(() => setToast(null), TOAST_MS);
    return () => clearTimeout(timer);
  }, [toast]);

  const reopen = useCallback(
    (which?: TabMeta) => {
      const tab = which ?? closed[closed.length - 1];
      if (!tab) return;
      // Its session was closed with it: the reopened tab opens a new one.
      const revived: TabMeta = { ...tab, id: newId(), sessionId: null, version: null };
      setClosed((current) => current.filter((item) => item !== tab));
      setState((now) => ({ tabs: [...now.tabs, revived], active: revived.id }));
      setToast(null);
    },
    [closed],
  );

  const closeTab = (id: string) => {
    const closing = tabs.find((tab) => tab.id === id);
    if (closing?.sessionId) del(`/sessions/${enc(closing.sessionId)}`).catch(() => undefined);
    if (closing) {
      setClosed((current) => [...current.slice(-(MAX_CLOSED - 1)), closing]);
      // Unsaved SQL: closed at once, with Undo at hand.
      if (hasUnsavedSql(closing)) setToast(closing);
    }
    setState((current) => {
      const index = current.tabs.findIndex((tab) => tab.id === id);
      const rest = current.tabs.filter((tab) => tab.id !== id);
      if (rest.length === 0) {
        const fresh = freshTab();
        return { tabs: [fresh], active: fresh.id };
      }
      const active = current.active === id ? rest[Math.max(0, index - 1)].id : current.active;
      return { tabs: rest, active };
    });
  };

  useEffect(
    () =>
      onOpenInEditor((request) => {
        const open = { run: request.run, catalog: request.catalog, database: request.database };
        if (request.savedQueryId) openSaved(request.sql, request.title, request.savedQueryId, !!request.newTab, open);
        else addTab(request.sql, request.title, open);
      }),
    [addTab, openSaved],
  );

  const onTabKey = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.key !== "ArrowRight" && event.key !== "ArrowLeft") return;
    const index = tabs.findIndex((tab) => tab.id === activeTab.id);
    const next = tabs[(index + (event.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length];
    setState((current) => ({ ...current, active: next.id }));
    document.getElementById(`tab-${next.id}`)?.focus();
  };

  const onJobDone = useCallback(() => setHistoryKey((key) => key + 1), []);

  // Alt+Shift+T reopens the last closed tab (Ctrl+Shift+T belongs to the browser).
  useEffect(() => {
    if (!active) return;
    const onKey = (event: globalThis.KeyboardEvent) => {
      if (event.altKey && event.shiftKey && event.code === "KeyT") {
        event.preventDefault();
        reopen();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [active, reopen]);

  return (
    <div className="editor-page" data-active={active}>
      <div className="tab-strip" role="tablist" aria-label="Editor tabs" onKeyDown={onTabKey}>
        {tabs.map((tab) => {
          const selected = tab.id === activeTab.id;
          const sync = syncOf(tab.id);
          return (
            <div key={tab.id} className={`tab${selected ? " active" : ""}`} data-testid="editor-tab" data-sync={sync.state}>
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
              <SyncMark sync={sync} />
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
      {closed.length > 0 && (
        <details className="closed-tabs">
          <summary aria-label="Closed tabs" title="Reopen a closed tab (Alt+Shift+T: the last one)">
            ↺
          </summary>
          <ul role="menu" aria-label="Closed tabs">
            {[...closed].reverse().map((tab) => (
              <li key={tab.id}>
                <button type="button" role="menuitem" onClick={() => reopen(tab)}>
                  {tab.title}
                </button>
              </li>
            ))}
          </ul>
        </details>
      )}
      {toast && (
        <div className="toast" role="status" data-testid="closed-toast">
          Closed “{toast.title}” with unsaved SQL.
          <button type="button" className="small" onClick={() => reopen(toast)}>
            Undo
          </button>
        </div>
      )}
      {tabs.map((tab) => (
        <TabPane
          key={tab.id}
          tab={tab}
          visible={active && tab.id === activeTab.id}
          open={opens[tab.id]}
          onUpdate={update}
          onOpenTab={(sql, title, params) => addTab(sql, title, undefined, null, params)}
          historyKey={historyKey}
          onJobDone={onJobDone}
          layout={layout}
          onLayout={changeLayout}
        />
      ))}
    </div>
  );
}

/** A quiet mark on a tab the server does not have as shown: not sent for a while (offline,
 * retrying) or refused (the server's words in its tooltip). Nothing while a save is only due. */
function SyncMark({ sync }: { sync: TabSync }) {
  if (sync.state !== "failed" && sync.state !== "retrying") return null;
  const text =
    sync.state === "retrying"
      ? "Not saved to the server yet; trying again."
      : `Not saved to the server: ${sync.message ?? "refused"}`;
  return (
    <span className={`tab-sync ${sync.state}`} data-testid="tab-unsaved" title={text} aria-label={text}>
      {sync.state === "retrying" ? "○" : "!"}
    </span>
  );
}
