// The page of one table, view or function: header, comment, schema, details, properties,
// DDL (SHOW CREATE TABLE) and sample data (a query job shown with ResultView).
import { useCallback, useEffect, useRef, useState, type ReactNode } from "react";
import {
  enc,
  del,
  get,
  patch,
  sqlPath,
  type Column,
  type FunctionObject,
  type Job,
  type Schema,
  type Table,
} from "../../api";
import { formatTimestamp } from "../../components/jobs/time";
import { Link, navigate, pathOf, useTitle } from "../../router";
import { openInEditor } from "../../store";
import { ResultView } from "../../components/results/ResultView";
import { JobProgress, JobStatusBadge } from "../../components/jobs/JobProgress";
import {
  Breadcrumbs,
  DropDialog,
  EditableComment,
  ErrorAlert,
  KeyValues,
  StatusBadge,
  refreshTree,
  useLoad,
  usePoll,
} from "./common";
import { follow, resultOf, submit } from "./sql";


interface ObjectProps {
  catalog: string;
  database: string;
  name: string;
}

/** Extra fields docs/api.md adds to the table JSON. */
type TableInfo = Table & {
  location?: string;
  resolved_schema: (Schema & { expressions_resolved?: boolean }) | null;
};

type FunctionInfo = FunctionObject & {
  parameters?: { name: string; data_type: string }[];
  return_type?: string;
  created_by?: string;
  created_at?: string;
  updated_at?: string;
};

function queryInEditor(path: string, title: string) {
  openInEditor({ sql: `SELECT * FROM ${path} LIMIT 100`, title, run: true });
  navigate("/editor");
}

// --- tabs -------------------------------------------------------------------------------------

interface TabSpec {
  id: string;
  label: string;
  render: () => ReactNode;
}

function Tabs({ tabs, initial }: { tabs: TabSpec[]; initial?: string }) {
  const [active, setActive] = useState(initial ?? tabs[0].id);
  const [visited, setVisited] = useState<Set<string>>(() => new Set([initial ?? tabs[0].id]));
  const refs = useRef<Record<string, HTMLButtonElement | null>>({});
  const select = (id: string) => {
    setActive(id);
    setVisited((old) => (old.has(id) ? old : new Set([...old, id])));
  };
  const onKey = (event: React.KeyboardEvent, index: number) => {
    let next = -1;
    if (event.key === "ArrowRight") next = (index + 1) % tabs.length;
    else if (event.key === "ArrowLeft") next = (index - 1 + tabs.length) % tabs.length;
    if (next < 0) return;
    event.preventDefault();
    select(tabs[next].id);
    refs.current[tabs[next].id]?.focus();
  };
  return (
    <div className="cat-tabs">
      <div role="tablist" aria-label="Sections" className="cat-tablist">
        {tabs.map((tab, index) => (
          <button
            key={tab.id}
            ref={(el) => {
              refs.current[tab.id] = el;
            }}
            type="button"
            role="tab"
            id={`tab-${tab.id}`}
            aria-selected={active === tab.id}
            aria-controls={`panel-${tab.id}`}
            tabIndex={active === tab.id ? 0 : -1}
            onClick={() => select(tab.id)}
            onKeyDown={(event) => onKey(event, index)}
          >
            {tab.label}
          </button>
        ))}
      </div>
      {tabs.map((tab) =>
        visited.has(tab.id) ? (
          <div
            key={tab.id}
            role="tabpanel"
            id={`panel-${tab.id}`}
            aria-labelledby={`tab-${tab.id}`}
            hidden={active !== tab.id}
            className="cat-panel"
          >
            {tab.render()}
          </div>
        ) : null,
      )}
    </div>
  );
}

// --- schema -----------------------------------------------------------------------------------

function kindDetails(column: Column): ReactNode {
  if (column.kind === "computed") return <code>{column.expression ?? ""}</code>;
  if (column.kind === "metadata")
    return (
      <>
        <code>{column.metadata_key ?? column.name}</code>
        {column.virtual ? <span className="badge"> virtual</span> : null}
      </>
    );
  return null;
}

export function SchemaTable({ schema, resolved }: { schema: Schema; resolved: boolean }) {
  const pk = new Set((schema.primary_key?.columns ?? []).map((c) => c.toLowerCase()));
  if (schema.columns.length === 0) return <p className="muted">No columns.</p>;
  return (
    <table className="grid cat-schema" data-testid="schema">
      <thead>
        <tr>
          <th scope="col">Column</th>
          <th scope="col">Kind</th>
          <th scope="col">Type</th>
          <th scope="col">Nullable</th>
          <th scope="col">Expression / metadata</th>
          <th scope="col">Key</th>
        </tr>
      </thead>
      <tbody>
        {schema.columns.map((column) => {
          const nullable =
            column.nullable ?? !(column.data_type ?? "").toUpperCase().includes("NOT NULL");
          return (
            <tr key={column.name} data-testid={`column-${column.name}`}>
              <td className="mono">{column.name}</td>
              <td>{column.kind}</td>
              <td className="mono" data-testid="column-type">
                {column.data_type ?? (column.kind === "computed" ? (resolved ? "(being typed)" : "") : "")}
              </td>
              <td>{nullable ? "yes" : "NOT NULL"}</td>
              <td>{kindDetails(column)}</td>
              <td>{pk.has(column.name.toLowerCase()) ? <span className="badge info" title="Primary key">PK</span> : null}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function Details({ table, schema }: { table: TableInfo; schema: Schema }) {
  return (
    <div className="cat-details">
      <h3>Watermark</h3>
      {schema.watermarks.length === 0 ? (
        <p className="muted">No watermark.</p>
      ) : (
        <ul className="cat-list">
          {schema.watermarks.map((w) => (
            <li key={w.column}>
              <code>{w.column}</code> AS <code>{w.expression}</code>
            </li>
          ))}
        </ul>
      )}
      <h3>Primary key</h3>
      {schema.primary_key ? (
        <p>
          <code>{schema.primary_key.name ?? "(unnamed)"}</code> ({schema.primary_key.columns.join(", ")}) NOT ENFORCED
        </p>
      ) : (
        <p className="muted">No primary key.</p>
      )}
      <h3>Options</h3>
      <KeyValues values={table.options ?? {}} empty="No options." />
      <h3>Partitioning</h3>
      {table.partition_by && table.partition_by.length > 0 ? (
        <p className="mono">{table.partition_by.join(", ")}</p>
      ) : (
        <p className="muted">Not partitioned.</p>
      )}
      {table.location ? (
        <>
          <h3>Location</h3>
          <p className="mono">{table.location}</p>
        </>
      ) : null}
    </div>
  );
}

function PropertiesPanel({ base }: { base: string }) {
  const props = useLoad(
    (signal) => get<{ properties: Record<string, string> }>(`${base}/properties`, { signal }),
    base,
  );
  if (props.error) return <ErrorAlert error={props.error} />;
  if (!props.data) return <p className="muted">Loading properties…</p>;
  return <KeyValues values={props.data.properties} empty="No properties." />;
}

function DdlPanel({ path }: { path: string }) {
  const [text, setText] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let cancelled = false;
    const stop = new AbortController();
    (async () => {
      try {
        const first = await submit(`SHOW CREATE TABLE ${path}`, 30);
        const job = await follow(first, () => undefined, stop.signal);
        if (cancelled) return;
        if (job.status !== "FINISHED") throw new Error(job.error?.message ?? `The statement ended ${job.status}.`);
        const result = await resultOf(job);
        const lines = result.rows.map((row) => String(row[0] ?? ""));
        if (!cancelled) setText(lines.join("\n"));
      } catch (err) {
        if (!cancelled) setError(err);
      }
    })();
    return () => {
      cancelled = true;
      stop.abort();
    };
  }, [path]);
  if (error) return <ErrorAlert error={error} />;
  if (text === null) return <p className="muted">Running SHOW CREATE TABLE…</p>;
  return (
    <>
      <pre className="cat-ddl" data-testid="ddl">
        {text}
      </pre>
      <div className="toolbar">
        <button
          type="button"
          className="small"
          onClick={() => {
            openInEditor({ sql: text, title: "DDL" });
            navigate("/editor");
          }}
        >
          Open in editor
        </button>
      </div>
    </>
  );
}

function SamplePanel({ path, title }: { path: string; title: string }) {
  const [job, setJob] = useState<Job | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [run, setRun] = useState(0);
  useEffect(() => {
    let cancelled = false;
    const stop = new AbortController();
    setJob(null);
    setError(null);
    (async () => {
      try {
        const first = await submit(`SELECT * FROM ${path} LIMIT 100`, 5);
        await follow(first, (j) => !cancelled && setJob(j), stop.signal);
      } catch (err) {
        if (!cancelled) setError(err);
      }
    })();
    return () => {
      cancelled = true;
      stop.abort();
    };
  }, [path, run]);
  return (
    <div className="cat-sample" data-testid="sample">
      <div className="toolbar">
        <button type="button" className="small" onClick={() => queryInEditor(path, title)}>
          Query in editor
        </button>
        <button
          type="button"
          className="small"
          onClick={() => setRun((n) => n + 1)}
          disabled={!error && (!job || job.status === "CREATED" || job.status === "RUNNING")}
        >
          Run again
        </button>
        {job ? <JobStatusBadge status={job.status} /> : null}
        {job ? (
          <Link to={pathOf("jobs", job.id)} className="muted">
            job {job.id.slice(0, 8)}
          </Link>
        ) : null}
      </div>
      <ErrorAlert error={error} />
      {!job && !error ? (
        <p className="muted cat-spinner" role="status">
          Starting the sample query…
        </p>
      ) : null}
      {job && (job.status === "CREATED" || job.status === "RUNNING") ? (
        <div role="status" className="cat-spinner">
          <span className="muted">Reading the first 100 rows…</span> <JobProgress job={job} />
        </div>
      ) : null}
      {job && (job.status === "FAILED" || job.status === "CANCELED") ? (
        <div className="alert" role="alert">
          {job.error?.message ?? `The query ended ${job.status}.`}
        </div>
      ) : null}
      {job && job.status === "FINISHED" ? (
        <div className="cat-result">
          <p className="muted" data-testid="sample-count">
            {job.result?.row_count ?? 0} rows
          </p>
          <ResultView job={job} height={380} />
        </div>
      ) : null}
    </div>
  );
}

// --- pages ------------------------------------------------------------------------------------

function Header({
  parts,
  kind,
  children,
  actions,
}: {
  parts: string[];
  kind: string;
  children?: ReactNode;
  actions: ReactNode;
}) {
  return (
    <>
      <Breadcrumbs parts={parts.slice(0, 2)} />
      <div className="cat-header">
        <h1 data-testid="object-name">
          <span className="badge info">{kind}</span> <span className="mono">{parts.join(".")}</span>
        </h1>
        {children}
        <div className="spacer" />
        {actions}
      </div>
    </>
  );
}

function NotLoaded({ parts, error, what }: { parts: string[]; error: unknown; what: string }) {
  return (
    <div className="cat-main-inner">
      <Breadcrumbs parts={parts.slice(0, 2)} />
      {error ? <ErrorAlert error={error} /> : <p className="muted">Loading {what}…</p>}
    </div>
  );
}

function useDrop(catalog: string, database: string, url: string) {
  return useCallback(async () => {
    await del(url);
    refreshTree();
    navigate(pathOf("catalog", catalog, database));
  }, [catalog, database, url]);
}

export function TablePage({ catalog, database, name }: ObjectProps) {
  const parts = [catalog, database, name];
  const path = sqlPath(parts);
  useTitle(parts.join("."));
  const base = `/catalogs/${enc(catalog)}/databases/${enc(database)}/tables/${enc(name)}`;
  const info = useLoad((signal) => get<TableInfo>(base, { signal }), base);
  const [dropping, setDropping] = useState(false);
  const drop = useDrop(catalog, database, base);
  const staged = info.data?.status === "staged";
  const wasStaged = useRef(false);
  usePoll(staged, info.reload);
  useEffect(() => {
    if (staged) wasStaged.current = true;
    else if (wasStaged.current && info.data) {
      wasStaged.current = false;
      refreshTree();
    }
  }, [staged, info.data]);

  if (!info.data) return <NotLoaded parts={parts} error={info.error} what="table" />;
  const table = info.data;
  const resolved = table.resolved_schema;
  const schema: Schema = resolved ?? table.schema;

  const tabs: TabSpec[] = [
    {
      id: "schema",
      label: "Schema",
      render: () => (
        <>
          {staged ? (
            <p className="muted">The schema is known once the job creating the table has finished.</p>
          ) : null}
          <SchemaTable schema={schema} resolved={resolved !== null} />
          {resolved && resolved.expressions_resolved === false ? (
            <p className="muted">Computed column types are filled in once a worker has analysed the expressions.</p>
          ) : null}
        </>
      ),
    },
    { id: "details", label: "Details", render: () => <Details table={table} schema={schema} /> },
    { id: "properties", label: "Properties", render: () => <PropertiesPanel base={base} /> },
  ];
  if (!staged) {
    tabs.push({ id: "ddl", label: "DDL", render: () => <DdlPanel path={path} /> });
    tabs.push({ id: "sample", label: "Sample data", render: () => <SamplePanel path={path} title={name} /> });
  }

  return (
    <div className="cat-main-inner">
      <Header
        parts={parts}
        kind="table"
        actions={
          <>
            <button type="button" onClick={() => queryInEditor(path, name)} disabled={staged}>
              Query
            </button>
            <button type="button" className="danger" onClick={() => setDropping(true)}>
              Drop table
            </button>
          </>
        }
      >
        <span data-testid="table-status">
          <StatusBadge table={table} />
        </span>
        <span className="badge">{table.managed ? "managed" : "external"}</span>
      </Header>
      {info.error ? <ErrorAlert error={info.error} /> : null}
      <EditableComment
        value={table.comment}
        onSave={async (comment) => info.setData(await patch<TableInfo>(base, { comment }))}
      />
      <dl className="cat-facts">
        <dt>Owner</dt>
        <dd>{table.created_by ?? "—"}</dd>
        <dt>Created</dt>
        <dd>{formatTimestamp(table.created_at)}</dd>
        <dt>Updated</dt>
        <dd>{formatTimestamp(table.updated_at)}</dd>
        <dt>Format</dt>
        <dd>{table.options?.format ?? table.options?.connector ?? "parquet"}</dd>
      </dl>
      <Tabs key={staged ? "staged" : "active"} tabs={tabs} />
      {dropping ? (
        <DropDialog
          what={`table ${parts.join(".")}`}
          name={name}
          typeToConfirm={false}
          onClose={() => setDropping(false)}
          onConfirm={drop}
        >
          <p>
            {table.managed
              ? "The table is managed: its data in the warehouse is deleted with it."
              : "The table is external: only the catalog entry goes; its files stay where they are."}
          </p>
        </DropDialog>
      ) : null}
    </div>
  );
}

export function ViewPage({ catalog, database, name }: ObjectProps) {
  const parts = [catalog, database, name];
  const path = sqlPath(parts);
  useTitle(parts.join("."));
  const base = `/catalogs/${enc(catalog)}/databases/${enc(database)}/views/${enc(name)}`;
  const info = useLoad((signal) => get<TableInfo>(base, { signal }), base);
  const [dropping, setDropping] = useState(false);
  const drop = useDrop(catalog, database, base);

  if (!info.data) return <NotLoaded parts={parts} error={info.error} what="view" />;
  const view = info.data;
  const schema = view.resolved_schema ?? view.schema;
  const tabs: TabSpec[] = [
    {
      id: "query",
      label: "Query",
      render: () => (
        <>
          <h3>Query</h3>
          <pre data-testid="view-query">{view.query ?? ""}</pre>
          <h3>Expanded query</h3>
          {view.expanded_query ? <pre>{view.expanded_query}</pre> : <p className="muted">Not expanded yet.</p>}
        </>
      ),
    },
    {
      id: "schema",
      label: "Schema",
      render: () =>
        schema && schema.columns.length > 0 ? (
          <SchemaTable schema={schema} resolved={view.resolved_schema !== null} />
        ) : (
          <p className="muted">The schema is derived when a worker analyses the view.</p>
        ),
    },
    { id: "sample", label: "Sample data", render: () => <SamplePanel path={path} title={name} /> },
  ];
  return (
    <div className="cat-main-inner">
      <Header
        parts={parts}
        kind="view"
        actions={
          <>
            <button type="button" onClick={() => queryInEditor(path, name)}>
              Query
            </button>
            <button type="button" className="danger" onClick={() => setDropping(true)}>
              Drop view
            </button>
          </>
        }
      />
      <EditableComment
        value={view.comment}
        onSave={async (comment) => info.setData(await patch<TableInfo>(base, { comment }))}
      />
      <dl className="cat-facts">
        <dt>Owner</dt>
        <dd>{view.created_by ?? "—"}</dd>
        <dt>Created</dt>
        <dd>{formatTimestamp(view.created_at)}</dd>
        <dt>Updated</dt>
        <dd>{formatTimestamp(view.updated_at)}</dd>
      </dl>
      <Tabs tabs={tabs} />
      {dropping ? (
        <DropDialog
          what={`view ${parts.join(".")}`}
          name={name}
          typeToConfirm={false}
          onClose={() => setDropping(false)}
          onConfirm={drop}
        >
          <p>Only the view definition is dropped; the tables it reads stay.</p>
        </DropDialog>
      ) : null}
    </div>
  );
}

export function FunctionPage({ catalog, database, name }: ObjectProps) {
  const parts = [catalog, database, name];
  useTitle(parts.join("."));
  const base = `/catalogs/${enc(catalog)}/databases/${enc(database)}/functions/${enc(name)}`;
  const info = useLoad((signal) => get<FunctionInfo>(base, { signal }), base);
  const [dropping, setDropping] = useState(false);
  const drop = useDrop(catalog, database, base);

  if (!info.data) return <NotLoaded parts={parts} error={info.error} what="function" />;
  const fn = info.data;
  return (
    <div className="cat-main-inner">
      <Header
        parts={parts}
        kind="function"
        actions={
          <button type="button" className="danger" onClick={() => setDropping(true)}>
            Drop function
          </button>
        }
      >
        <span className="badge">{fn.language}</span>
      </Header>
      <EditableComment
        value={fn.comment}
        onSave={async (comment) => info.setData(await patch<FunctionInfo>(base, { comment }))}
      />
      <dl className="cat-facts">
        <dt>Language</dt>
        <dd>{fn.language}</dd>
        <dt>Owner</dt>
        <dd>{fn.created_by ?? "—"}</dd>
        <dt>Return type</dt>
        <dd className="mono">{fn.return_type || "—"}</dd>
        <dt>Created</dt>
        <dd>{formatTimestamp(fn.created_at)}</dd>
      </dl>
      <h2>Parameters</h2>
      {fn.parameters && fn.parameters.length > 0 ? (
        <table className="grid">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
            </tr>
          </thead>
          <tbody>
            {fn.parameters.map((p) => (
              <tr key={p.name}>
                <td className="mono">{p.name}</td>
                <td className="mono">{p.data_type}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="muted">No declared parameters.</p>
      )}
      <h2>Implementation</h2>
      <pre data-testid="function-implementation">{fn.implementation}</pre>
      {dropping ? (
        <DropDialog
          what={`function ${parts.join(".")}`}
          name={name}
          typeToConfirm={false}
          onClose={() => setDropping(false)}
          onConfirm={drop}
        >
          <p>Statements that call it will fail afterwards.</p>
        </DropDialog>
      ) : null}
    </div>
  );
}

