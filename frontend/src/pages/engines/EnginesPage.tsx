// /engines: the Spark engines that run the user's jobs (admins: every engine), live first, asked
// again every few seconds. The user may restart their own engine (the next statement starts a
// fresh one); admins may stop any. docs/api.md §6 and "Engines".
import { useState } from "react";
import { enc, post, type Engine, type User } from "../../api";
import { ENGINE_POLL_MS } from "../../data/client";
import { useEngines, useWrite } from "../../data/queries";
import { useTitle } from "../../router";
import { PagedGrid } from "../../components/grid/DataGrid";
import { formatTimestamp } from "../../format";
import { ConfirmDialog } from "../catalog/common";
import {
  isLive,
  mayRestart,
  mayStop,
  ownerText,
  requestText,
  shortId,
  stopReasonText,
  uptimeText,
} from "./engines";
import "../admin/admin.css";
import "./engines.css";

type Ask = { engine: Engine; what: "restart" | "stop" };

function StateBadge({ engine }: { engine: Engine }) {
  const requested = requestText(engine);
  return (
    <span className="engine-state">
      <span className={`badge engine-${engine.state}`} data-testid="engine-state">
        {engine.state}
      </span>
      {requested ? (
        <span className="badge warn" data-testid="engine-request">
          {requested}
        </span>
      ) : null}
      {!isLive(engine) && engine.stop_reason ? (
        <span className="muted small-text" title={engine.stop_message || undefined}>
          {stopReasonText(engine)}
        </span>
      ) : null}
    </span>
  );
}

function jobsText(count: number): string {
  return count === 1 ? "1 job" : `${count} jobs`;
}

export function EnginesPage({ user }: { user: User }) {
  useTitle("Engines");
  const admin = user.is_admin;
  const [liveOnly, setLiveOnly] = useState(false);
  const [asking, setAsking] = useState<Ask | null>(null);
  const engines = useEngines(liveOnly);
  const send = useWrite(
    ({ engine, what }: Ask) => post<Engine>(`/engines/${enc(engine.id)}/${what}`),
    ["engines"],
  ).mutateAsync;

  // Others see only their own engines: any live one runs their statements.
  const running = engines.items.some(isLive);

  return (
    <div className="page admin-page engines-page">
      <div className="admin-head">
        <h1>Engines</h1>
        <span className="muted">
          {admin ? "Every engine on the workers." : "The Spark engine that runs your statements."} Refreshed every{" "}
          {ENGINE_POLL_MS / 1000} s.
        </span>
      </div>
      <label className="inline engines-filter">
        <input type="checkbox" checked={liveOnly} onChange={(event) => setLiveOnly(event.target.checked)} />
        Only running engines
      </label>
      {engines.loaded && !running ? (
        <p className="card engines-empty" role="status" data-testid="engines-empty">
          {admin
            ? "No engine is running; the next statement starts one."
            : "No engine is running for you; your next statement starts one."}
        </p>
      ) : null}
      <PagedGrid
        list={engines}
        loadingText="Loading engines…"
        empty={null}
        className="admin-table engines-table"
        testId="engines"
        rowKey={(engine) => engine.id}
        rowAttributes={(engine) => ({
          "data-testid": `engine-${engine.id}`,
          className: isLive(engine) ? undefined : "engine-ended",
        })}
        columns={[
          {
            header: "Owner",
            cell: (engine) => (
              <>
                <span className="engine-owner">{ownerText(engine)}</span>{" "}
                <span className="muted mono small-text" title={engine.id}>
                  {shortId(engine.id)}
                </span>
              </>
            ),
          },
          { header: "State", cell: (engine) => <StateBadge engine={engine} /> },
          { header: "Runtime", cell: (engine) => engine.runtime },
          {
            header: "Uptime",
            className: "nowrap",
            title: (engine) => (engine.ready_at ? `ready since ${formatTimestamp(engine.ready_at)}` : undefined),
            cell: (engine) => uptimeText(engine),
          },
          { header: "Memory", className: "nowrap", cell: (engine) => engine.driver_memory || "—" },
          { header: "Running jobs", className: "nowrap", cell: (engine) => jobsText(engine.running_jobs) },
          {
            header: "Last used",
            className: "nowrap",
            cell: (engine) => (engine.last_used_at ? formatTimestamp(engine.last_used_at) : "never"),
          },
          {
            header: "Actions",
            hideHeader: true,
            className: "admin-actions",
            cell: (engine) => (
              <>
                {mayRestart(engine, user) ? (
                  <button
                    type="button"
                    className="small"
                    aria-label={`Restart engine of ${ownerText(engine)}`}
                    onClick={() => setAsking({ engine, what: "restart" })}
                  >
                    Restart
                  </button>
                ) : null}
                {mayStop(engine, user) ? (
                  <button
                    type="button"
                    className="small danger"
                    aria-label={`Stop engine of ${ownerText(engine)}`}
                    onClick={() => setAsking({ engine, what: "stop" })}
                  >
                    Stop
                  </button>
                ) : null}
              </>
            ),
          },
        ]}
      />
      {asking ? (
        <ConfirmDialog
          title={asking.what === "restart" ? "Restart this engine?" : `Stop the engine of ${ownerText(asking.engine)}?`}
          action={asking.what === "restart" ? "Restart engine" : "Stop engine"}
          busyLabel={asking.what === "restart" ? "Restarting…" : "Stopping…"}
          onClose={() => setAsking(null)}
          onConfirm={async () => {
            await send(asking);
            setAsking(null);
          }}
        >
          <p>
            {asking.engine.running_jobs > 0
              ? `Its ${jobsText(asking.engine.running_jobs)} running now fail${asking.engine.running_jobs === 1 ? "s" : ""} with it. `
              : "No job of it is running now. "}
            {asking.what === "restart"
              ? "Your next statement starts a fresh engine, which takes a few seconds."
              : "The next statement of its users starts a fresh engine."}
          </p>
        </ConfirmDialog>
      ) : null}
    </div>
  );
}
