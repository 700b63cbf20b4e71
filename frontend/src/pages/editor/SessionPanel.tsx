// The tab's session: current catalog/database, properties, and its temporary objects (with
// "shadows" marks linking to the permanent object, and Drop with confirmation).
import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { ApiError, del, enc, get, sqlPath, type Page, type Session } from "../../api";
import { DataGrid } from "../../components/grid/DataGrid";
import { Link, pathOf } from "../../router";
import { errorText, type TemporaryItem } from "./types";

const KINDS = [
  { list: "tables", label: "Temporary tables" },
  { list: "views", label: "Temporary views" },
  { list: "functions", label: "Temporary functions" },
] as const;

type PermanentKind = "table" | "view" | "function";

/** Which permanent object a shadowing temporary one hides: its kind, or null if none. */
async function permanentKind(item: TemporaryItem): Promise<PermanentKind | null> {
  if (!item.catalog || !item.database) return null;
  const base = `/catalogs/${enc(item.catalog)}/databases/${enc(item.database)}`;
  const tries: [PermanentKind, string][] =
    item.kind === "function"
      ? [["function", "functions"]]
      : [
          ["table", "tables"],
          ["view", "views"],
        ];
  for (const [kind, list] of tries) {
    try {
      await get(`${base}/${list}/${enc(item.name)}`);
      return kind;
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) throw error;
    }
  }
  return null;
}

function TemporaryRow({
  item,
  sessionId,
  onDropped,
}: {
  item: TemporaryItem;
  sessionId: string;
  onDropped(): void;
}) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const path = item.system || !item.catalog ? item.name : sqlPath([item.catalog, item.database ?? "", item.name]);

  const shadowed = useQuery({
    queryKey: ["catalogs", "permanent-kind", item.kind, item.catalog, item.database, item.name],
    queryFn: () => permanentKind(item),
    enabled: item.shadows && !item.system,
  });
  const permanent = shadowed.data ?? null;

  const drop = async () => {
    setBusy(true);
    setError(null);
    try {
      const list = item.kind === "function" ? "functions" : item.kind === "view" ? "views" : "tables";
      await del(
        `/sessions/${enc(sessionId)}/temporary/${list}/${enc(path)}${item.system ? "?system=true" : ""}`,
      );
      onDropped();
    } catch (e) {
      setError(errorText(e));
      setBusy(false);
      setConfirming(false);
    }
  };

  return (
    <li className="temp-item" data-testid="temporary-object" data-path={path}>
      <div className="temp-head">
        <code className="temp-name" title={`temporary ${item.kind} ${path}`}>
          {path}
        </code>
        <span className="badge staged">temporary {item.kind}</span>
        {item.shadows && (
          <span className="badge warn" data-testid="shadows" title="A permanent object has this name; this one is used instead">
            shadows
          </span>
        )}
      </div>
      {item.shadows && !item.system && item.catalog && item.database && (
        <div className="temp-links small-text">
          Hides{" "}
          {permanent ? (
            <Link to={pathOf("catalog", item.catalog, item.database, permanent, item.name)} data-testid="shadowed-link">
              the permanent {permanent} {path}
            </Link>
          ) : (
            <span>a permanent object</span>
          )}
          {" · "}
          <Link to={pathOf("catalog", item.catalog, item.database)}>database {sqlPath([item.catalog, item.database])}</Link>
        </div>
      )}
      {item.query && (
        <details className="small-text">
          <summary>Query</summary>
          <pre className="temp-query">{item.query}</pre>
        </details>
      )}
      <div className="temp-actions">
        {!confirming ? (
          <button type="button" className="small danger" onClick={() => setConfirming(true)} aria-label={`Drop ${path}`}>
            Drop
          </button>
        ) : (
          <span role="group" aria-label="Confirm drop">
            <span className="small-text">Drop temporary {item.kind} {path}?</span>{" "}
            <button type="button" className="small danger" onClick={drop} disabled={busy} autoFocus>
              {busy ? "Dropping…" : "Yes, drop"}
            </button>{" "}
            <button type="button" className="small" onClick={() => setConfirming(false)} disabled={busy}>
              Keep
            </button>
          </span>
        )}
      </div>
      {error && <div className="field-error">{error}</div>}
    </li>
  );
}

export function SessionPanel({
  session,
  sessionError,
  refreshKey,
  onChanged,
}: {
  session: Session | null;
  sessionError: string | null;
  refreshKey: number;
  onChanged(): void;
}) {
  const [localKey, setLocalKey] = useState(0);
  const sessionId = session?.id ?? null;
  // Loaded again after each run (refreshKey) and after a drop here (localKey).
  const temporary = useQuery({
    queryKey: ["sessions", `/sessions/${enc(sessionId ?? "")}`, "temporary", refreshKey, localKey],
    queryFn: async ({ signal }) =>
      Object.fromEntries(
        await Promise.all(
          KINDS.map(({ list }) =>
            get<Page<TemporaryItem>>(`/sessions/${enc(sessionId ?? "")}/temporary/${list}?page_size=200`, {
              signal,
            }).then((page) => [list, page.items] as const),
          ),
        ),
      ) as Record<string, TemporaryItem[]>,
    enabled: !!sessionId,
    placeholderData: (previous) => previous,
  });
  const lists: Record<string, TemporaryItem[] | null> = temporary.data ?? {};
  const error = temporary.error ? errorText(temporary.error) : null;


  if (!session) {
    return (
      <div className="panel-body" data-testid="session-panel">
        {sessionError ? (
          <div className="alert danger">{sessionError}</div>
        ) : (
          <p className="muted">No session yet: it opens with the first statement you run or when you pick a catalog.</p>
        )}
      </div>
    );
  }
  const properties = Object.entries(session.properties ?? {});
  return (
    <div className="panel-body" data-testid="session-panel">
      <dl className="session-facts">
        <dt>Catalog</dt>
        <dd data-testid="session-catalog">{session.current_catalog ?? "—"}</dd>
        <dt>Database</dt>
        <dd data-testid="session-database">{session.current_database ?? "—"}</dd>
        <dt>Session</dt>
        <dd>
          <code className="small-text">{session.id}</code>
        </dd>
      </dl>
      <h3>Settings</h3>
      {properties.length === 0 ? (
        <p className="muted small-text">No settings (use SET key = value).</p>
      ) : (
        <DataGrid
          headless
          rows={properties}
          className="compact"
          rowKey={([key]) => key}
          columns={[
            { header: "Key", cell: ([key]) => <code>{key}</code> },
            { header: "Value", cell: ([, value]) => value },
          ]}
        />
      )}
      {error && <div className="alert danger">{error}</div>}
      {KINDS.map(({ list, label }) => {
        const items = lists[list];
        return (
          <section key={list} aria-label={label}>
            <h3>{label}</h3>
            {items === undefined || items === null ? (
              <p className="muted small-text">Loading…</p>
            ) : items.length === 0 ? (
              <p className="muted small-text">None.</p>
            ) : (
              <ul className="temp-list">
                {items.map((item) => (
                  <TemporaryRow
                    key={`${item.kind}:${item.system ? "sys" : ""}:${item.catalog}.${item.database}.${item.name}`}
                    item={item}
                    sessionId={session.id}
                    onDropped={() => {
                      setLocalKey((k) => k + 1);
                      onChanged();
                    }}
                  />
                ))}
              </ul>
            )}
          </section>
        );
      })}
    </div>
  );
}
