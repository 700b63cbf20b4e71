// One tile: its saved query run as the viewer with the dashboard's parameter values, shown as
// the result grid or the chart of the results view, with the time it was last refreshed.
import { useMemo, useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { del, enc, type ResultColumn } from "../../api";
import { ErrorAlert } from "../../components/ErrorAlert";
import { ResultChart } from "../../components/results/ResultChart";
import { ResultView } from "../../components/results/ResultView";
import { fittingChart, type ChartConfig } from "../../components/results/chartModel";
import { formatClock } from "../../format";
import { useWrite } from "../../data/queries";
import { ROW_PX, gridArea, runTile, type Dashboard, type PageSession, type ParameterValue, type Tile } from "../../data/dashboards";
import { Link } from "../../router";

/** The key of every tile run of a dashboard (the Refresh button refetches them all). */
export const runsKey = (dashboard: string) => ["dashboard-runs", dashboard];

export function TileView({
  dashboard,
  tile,
  values,
  session,
}: {
  dashboard: Dashboard;
  tile: Tile;
  values: Record<string, ParameterValue>;
  session: PageSession;
}) {
  const client = useQueryClient();
  const interval = dashboard.refresh_interval_seconds;
  const run = useQuery({
    queryKey: [...runsKey(dashboard.id), tile.id, values],
    queryFn: ({ signal }) => runTile(client, session, dashboard.id, tile.id, values, signal),
    refetchInterval: interval ? interval * 1000 : false,
    refetchOnWindowFocus: false,
    staleTime: Infinity,
    retry: false,
  });
  const remove = useWrite(() => del(`/dashboards/${enc(dashboard.id)}/tiles/${enc(tile.id)}`), ["dashboards"]);
  const job = run.data?.job;
  const failed = job && job.status !== "FINISHED" ? job.error : null;
  const height = tile.h * ROW_PX - 64;
  return (
    <section className="card dash-tile" style={gridArea(tile)} data-testid="dashboard-tile" aria-label={tile.saved_query_name}>
      <header className="dash-tile-head">
        <h2 title={tile.saved_query_name}>{tile.saved_query_name}</h2>
        <span className="muted dash-refreshed" data-testid="tile-refreshed">
          {run.isFetching ? "Refreshing…" : run.data ? `Refreshed ${formatClock(run.data.at)}` : ""}
        </span>
        {job ? <Link to={`/jobs/${enc(job.id)}`}>job</Link> : null}
        {dashboard.editable ? (
          <button type="button" className="link" onClick={() => remove.mutate(undefined)} aria-label="Remove tile">
            Remove
          </button>
        ) : null}
      </header>
      <ErrorAlert error={run.error ?? remove.error} />
      {failed ? (
        <div className="alert" role="alert" data-testid="tile-error">
          {failed.message} <span className="cat-code">({failed.code})</span>
        </div>
      ) : null}
      {job?.status === "CANCELED" ? <p className="muted">The run was canceled.</p> : null}
      {job && job.status === "FINISHED" && job.result ? (
        tile.kind === "chart" ? (
          <TileChart tile={tile} jobId={job.id} columns={job.result.columns} rowCount={job.result.row_count} />
        ) : (
          <div className="dash-tile-body" style={{ height }}>
            <ResultView job={job} height={height - 40} downloadName={tile.saved_query_name} />
          </div>
        )
      ) : null}
    </section>
  );
}

function TileChart({ tile, jobId, columns, rowCount }: { tile: Tile; jobId: string; columns: ResultColumn[]; rowCount: number }) {
  const configured = useMemo(
    () => fittingChart((tile.chart ?? tile.query_chart) as ChartConfig | null, columns),
    [tile.chart, tile.query_chart, columns],
  );
  const [config, setConfig] = useState<ChartConfig | null>(null);
  return (
    <div className="dash-tile-body" style={{ height: tile.h * ROW_PX - 64 }} data-testid="tile-chart">
      <ResultChart jobId={jobId} columns={columns} rowCount={rowCount} filters={[]} config={config ?? configured} onConfig={setConfig} saved />
    </div>
  );
}
