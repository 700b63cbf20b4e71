// A managed table's versions (GET …/tables/{t}/versions, newest first): who committed what
// and when; a readable version opens in the editor as `SELECT … VERSION AS OF n`. Below them,
// its schema changes (GET …/tables/{t}/schema-changes, from the audit log): who, when, what.
import { useState } from "react";
import type { SchemaChange, TableVersion } from "../../../api";
import { DataGrid, PagedGrid } from "../../../components/grid/DataGrid";
import { usePagedQuery } from "../../../data/queries";
import { formatTimestamp } from "../../../format";
import { Link, navigate, pathOf } from "../../../router";
import { openInEditor } from "../../../store";
import { ErrorAlert, useCatalogQuery } from "../common";
import { eventLines } from "./schemaChanges";

export const HISTORY_PAGE = 50;

/** The SQL that reads one version of a table. */
export function versionQuery(path: string, version: number): string {
  return `SELECT * FROM ${path} VERSION AS OF ${version} LIMIT 100`;
}

/** `{"rows_upserted": 3}` → "rows_upserted 3"; empty metrics → "". */
export function metricsText(metrics: unknown): string {
  if (!metrics || typeof metrics !== "object") return "";
  return Object.entries(metrics as Record<string, unknown>)
    .map(([key, value]) => `${key} ${typeof value === "object" ? JSON.stringify(value) : String(value)}`)
    .join(", ");
}

export function HistoryPanel({ base, path }: { base: string; path: string }) {
  const [token, setToken] = useState<string | null>(null);
  const [tokens, setTokens] = useState<(string | null)[]>([]);
  const url = `${base}/versions?page_size=${HISTORY_PAGE}${token ? `&page_token=${encodeURIComponent(token)}` : ""}`;
  const page = useCatalogQuery<{ items: TableVersion[]; next_page_token: string | null }>(url);
  if (page.error) return <ErrorAlert error={page.error} />;
  if (!page.data) return <p className="muted">Loading the history…</p>;
  const items = page.data.items;
  const next = page.data.next_page_token;
  return (
    <div data-testid="history">
      {items.length === 0 ? <p className="muted">No versions.</p> : null}
      <DataGrid
        rows={items}
        className="cat-history"
        rowKey={(item) => String(item.version)}
        rowAttributes={() => ({ "data-testid": "history-row" })}
        columns={[
          {
            header: "Version",
            cell: (item) => (
              <>
                {item.version}
                {item.current ? <span className="badge">current</span> : null}
              </>
            ),
          },
          { header: "Committed", cell: (item) => formatTimestamp(item.created_at) },
          { header: "User", cell: (item) => item.user ?? "—" },
          { header: "Operation", cell: (item) => item.operation },
          { header: "Rows", cell: (item) => item.rows ?? "—" },
          { header: "Metrics", className: "muted", cell: (item) => metricsText(item.metrics) },
          {
            header: "Job",
            cell: (item) => (item.job_id ? <Link to={pathOf("jobs", item.job_id)}>{item.job_id.slice(0, 8)}</Link> : "—"),
          },
          {
            header: "",
            cell: (item) =>
              item.readable ? (
                <button
                  type="button"
                  className="small"
                  onClick={() => {
                    openInEditor({ sql: versionQuery(path, item.version), title: `v${item.version}` });
                    navigate("/editor");
                  }}
                >
                  Query
                </button>
              ) : (
                <span className="muted" title="The retention has passed: its data was removed.">
                  expired
                </span>
              ),
          },
        ]}
      />
      <div className="toolbar">
        {tokens.length ? (
          <button
            type="button"
            className="small"
            onClick={() => {
              setToken(tokens[tokens.length - 1] ?? null);
              setTokens(tokens.slice(0, -1));
            }}
          >
            Newer
          </button>
        ) : null}
        {next ? (
          <button
            type="button"
            className="small"
            onClick={() => {
              setTokens([...tokens, token]);
              setToken(next);
            }}
          >
            Older
          </button>
        ) : null}
      </div>
      <SchemaChanges base={base} />
    </div>
  );
}

/** The table's creation and schema changes, newest first. */
function SchemaChanges({ base }: { base: string }) {
  const changes = usePagedQuery<SchemaChange>(`${base}/schema-changes`, { pageSize: 20 });
  return (
    <section aria-labelledby="schema-changes-heading">
      <h3 id="schema-changes-heading">Schema changes</h3>
      <PagedGrid
        list={changes}
        loadingText="Loading the schema changes…"
        empty={<p className="muted">No schema changes recorded.</p>}
        className="cat-history"
        testId="schema-changes"
        moreStyle="link"
        rowKey={(event) => String(event.id)}
        rowAttributes={() => ({ "data-testid": "schema-change-row" })}
        columns={[
          { header: "When", className: "nowrap", cell: (event) => formatTimestamp(event.at) },
          { header: "Who", cell: (event) => event.actor ?? <span className="muted">system</span> },
          {
            header: "What changed",
            cell: (event) => (
              <ul className="plain-list">
                {eventLines(event).map((line, index) => (
                  <li key={index}>{line}</li>
                ))}
              </ul>
            ),
          },
        ]}
      />
    </section>
  );
}
