// /dashboards: your dashboards and those teammates shared; /dashboards/{id}: one dashboard, a
// grid of tiles sharing its parameters, refreshed by hand or every interval, full screen on
// demand. docs/workbench.md "Dashboards".
import { useEffect, useMemo, useRef, useState, type FormEvent } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { del, enc, patch, post, type Page, type SavedQuery } from "../../api";
import { ErrorAlert } from "../../components/ErrorAlert";
import { apiQuery, useWrite } from "../../data/queries";
import {
  GRID_COLUMNS,
  REFRESH_CHOICES,
  ROW_PX,
  PageSession,
  nextPlace,
  parameterValues,
  valueText,
  type Dashboard,
} from "../../data/dashboards";
import { Link, navigate, useSegments, useTitle } from "../../router";
import { TileView, runsKey } from "./TileView";
import "../jobs/jobs-pages.css";
import "./dashboards.css";

export function DashboardsPage() {
  const segments = useSegments();
  return segments.length > 1 ? <DashboardView key={segments[1]} id={segments[1]} /> : <DashboardList />;
}

function DashboardList() {
  useTitle("Dashboards");
  const list = useQuery(apiQuery<Page<Dashboard>>("/dashboards?page_size=200"));
  const [title, setTitle] = useState("");
  const create = useWrite((body: { title: string }) => post<Dashboard>("/dashboards", body), ["dashboards"]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({ title }, { onSuccess: (made) => navigate(`/dashboards/${enc(made.id)}`) });
  };
  const items = list.data?.items ?? [];
  return (
    <div className="page dashboards-page" data-testid="dashboards-page">
      <div className="jobs-head">
        <h1>Dashboards</h1>
      </div>
      <form className="card dash-form" onSubmit={submit} aria-label="New dashboard">
        <label className="inline">
          Title
          <input value={title} onChange={(event) => setTitle(event.target.value)} />
        </label>
        <button type="submit" className="primary" disabled={create.isPending}>
          Create dashboard
        </button>
        <ErrorAlert error={create.error} />
      </form>
      <ErrorAlert error={list.error} />
      <ul className="dash-list">
        {items.map((item) => (
          <li key={item.id}>
            <Link to={`/dashboards/${enc(item.id)}`}>{item.title}</Link>{" "}
            <span className="muted">
              {item.owner} · {item.tiles.length} tiles{item.shared ? " · shared" : ""}
            </span>
          </li>
        ))}
        {list.data && !items.length ? <li className="muted">No dashboard yet.</li> : null}
      </ul>
    </div>
  );
}

function DashboardView({ id }: { id: string }) {
  const path = `/dashboards/${enc(id)}`;
  const found = useQuery(apiQuery<Dashboard>(path));
  const dashboard = found.data;
  useTitle(dashboard?.title ?? "Dashboard");
  const client = useQueryClient();
  const session = useMemo(() => new PageSession(), []);
  const [inputs, setInputs] = useState<Record<string, string>>({});
  const [applied, setApplied] = useState<Record<string, string>>({});
  const [full, setFull] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  const change = useWrite((body: Record<string, unknown>) => patch<Dashboard>(path, body), ["dashboards"]);
  const remove = useWrite(() => del(path), ["dashboards"]);

  useEffect(() => {
    const left = () => {
      if (!document.fullscreenElement) setFull(false);
    };
    document.addEventListener("fullscreenchange", left);
    return () => document.removeEventListener("fullscreenchange", left);
  }, []);
  const toggleFull = () => {
    if (full) {
      if (document.fullscreenElement) void document.exitFullscreen().catch(() => undefined);
      setFull(false);
    } else {
      // The page fills the window either way; the browser's full screen when it allows it.
      void box.current?.requestFullscreen?.().catch(() => undefined);
      setFull(true);
    }
  };

  if (found.error) return <div className="page"><ErrorAlert error={found.error} /></div>;
  if (!dashboard) return <div className="page muted">Loading…</div>;
  const values = parameterValues(dashboard.parameters, applied);
  const rows = dashboard.tiles.reduce((bottom, tile) => Math.max(bottom, tile.y + tile.h), 1);
  const apply = (event: FormEvent) => {
    event.preventDefault();
    setApplied(inputs);
  };
  return (
    <div ref={box} className={`page dashboard-page${full ? " dash-full" : ""}`} data-testid="dashboard-page">
      <div className="jobs-head dash-head">
        <h1>{dashboard.title}</h1>
        <span className="muted">
          {dashboard.owner}
          {dashboard.shared ? " · shared with your teams" : ""}
        </span>
        <span className="grow" />
        <label className="inline">
          Auto refresh
          <select
            aria-label="Auto refresh"
            value={String(dashboard.refresh_interval_seconds ?? "")}
            disabled={!dashboard.editable}
            onChange={(event) =>
              change.mutate({ refresh_interval_seconds: event.target.value ? Number(event.target.value) : null })
            }
          >
            {REFRESH_CHOICES.map((choice) => (
              <option key={choice.label} value={String(choice.seconds ?? "")}>
                {choice.label}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={() => void client.refetchQueries({ queryKey: runsKey(dashboard.id) })}>
          Refresh
        </button>
        <button type="button" onClick={toggleFull} aria-pressed={full}>
          {full ? "Exit full screen" : "Full screen"}
        </button>
      </div>
      <ErrorAlert error={change.error ?? remove.error} />
      {dashboard.parameters.length ? (
        <form className="dash-params" onSubmit={apply} aria-label="Parameters">
          {dashboard.parameters.map((parameter) => (
            <label key={parameter.name} className="inline">
              {parameter.name}
              <input
                aria-label={`parameter ${parameter.name}`}
                value={inputs[parameter.name] ?? valueText(parameter.default)}
                onChange={(event) => setInputs({ ...inputs, [parameter.name]: event.target.value })}
              />
            </label>
          ))}
          <button type="submit">Apply</button>
        </form>
      ) : null}
      <div
        className="dash-grid"
        style={{ gridTemplateColumns: `repeat(${GRID_COLUMNS}, minmax(0, 1fr))`, gridTemplateRows: `repeat(${rows}, ${ROW_PX}px)` }}
      >
        {dashboard.tiles.map((tile) => (
          <TileView key={tile.id} dashboard={dashboard} tile={tile} values={values} session={session} />
        ))}
      </div>
      {!dashboard.tiles.length ? <p className="muted">No tile yet{dashboard.editable ? ": add one below." : "."}</p> : null}
      {dashboard.editable && !full ? (
        <OwnerTools dashboard={dashboard} onDelete={() => remove.mutate(undefined, { onSuccess: () => navigate("/dashboards") })} />
      ) : null}
    </div>
  );
}

function OwnerTools({ dashboard, onDelete }: { dashboard: Dashboard; onDelete(): void }) {
  const path = `/dashboards/${enc(dashboard.id)}`;
  const queries = useQuery(apiQuery<Page<SavedQuery>>("/saved-queries?page_size=200"));
  const [query, setQuery] = useState("");
  const [kind, setKind] = useState<"table" | "chart">("table");
  const [width, setWidth] = useState(6);
  const [name, setName] = useState("");
  const [fallback, setFallback] = useState("");
  const addTile = useWrite((body: Record<string, unknown>) => post<Dashboard>(`${path}/tiles`, body), ["dashboards"]);
  const change = useWrite((body: Record<string, unknown>) => patch<Dashboard>(path, body), ["dashboards"]);
  const items = queries.data?.items ?? [];
  const add = (event: FormEvent) => {
    event.preventDefault();
    const place = nextPlace(dashboard.tiles, width);
    addTile.mutate({ saved_query: query || (items[0]?.id ?? ""), kind, w: width, h: 5, ...place });
  };
  const addParameter = (event: FormEvent) => {
    event.preventDefault();
    // A default that reads as a number is one (its input then sends numbers).
    const number = Number(fallback);
    const typed = fallback.trim() !== "" && Number.isFinite(number) ? number : fallback;
    const parameters = [...dashboard.parameters, { name, default: typed }];
    change.mutate({ parameters }, { onSuccess: () => setName("") });
  };
  return (
    <div className="dash-tools">
      <form className="card dash-form" onSubmit={add} aria-label="Add tile">
        <h2>Add a tile</h2>
        <label className="inline">
          Saved query
          <select aria-label="Saved query" value={query} onChange={(event) => setQuery(event.target.value)}>
            {items.map((item) => (
              <option key={item.id} value={item.id}>
                {item.name}
              </option>
            ))}
          </select>
        </label>
        <label className="inline">
          Show
          <select aria-label="Show" value={kind} onChange={(event) => setKind(event.target.value as "table" | "chart")}>
            <option value="table">table</option>
            <option value="chart">chart</option>
          </select>
        </label>
        <label className="inline">
          Width
          <select aria-label="Width" value={width} onChange={(event) => setWidth(Number(event.target.value))}>
            <option value={4}>a third</option>
            <option value={6}>half</option>
            <option value={12}>full</option>
          </select>
        </label>
        <button type="submit" className="primary" disabled={!items.length || addTile.isPending}>
          Add tile
        </button>
        <ErrorAlert error={addTile.error} />
      </form>
      <form className="card dash-form" onSubmit={addParameter} aria-label="Add parameter">
        <h2>Parameters</h2>
        <p className="muted">Every tile whose query has a :name marker of this name takes its value.</p>
        <label className="inline">
          Name
          <input aria-label="Parameter name" value={name} onChange={(event) => setName(event.target.value)} />
        </label>
        <label className="inline">
          Default
          <input aria-label="Parameter default" value={fallback} onChange={(event) => setFallback(event.target.value)} />
        </label>
        <button type="submit">Add parameter</button>
        <ErrorAlert error={change.error} />
      </form>
      <div className="card dash-form">
        <label className="inline">
          <input type="checkbox" checked={dashboard.shared} onChange={(event) => change.mutate({ shared: event.target.checked })} />
          Shared with my teams (read only; tiles run with each viewer&apos;s grants)
        </label>{" "}
        <button type="button" className="danger" onClick={onDelete}>
          Delete dashboard
        </button>
      </div>
    </div>
  );
}
