// What the engines page says about an engine, and what the signed-in user may do with it. Pure
// (unit-tested in engines.test.ts).
import type { Engine, EngineState, User } from "../../api";
import { formatMillis } from "../../format";

/** States whose process may still run jobs (jobs/engines.py LIVE_STATES). */
export const LIVE_STATES: ReadonlySet<EngineState> = new Set(["STARTING", "READY", "STOPPING"]);

export const isLive = (engine: Pick<Engine, "state">): boolean => LIVE_STATES.has(engine.state);

/** Whose engine it is, in words: "alice", "team analysts", "everyone", "spare (not assigned yet)". */
export function ownerText(engine: Pick<Engine, "owner" | "share_key">): string {
  if (engine.share_key === "") return "spare (not assigned yet)";
  if (engine.share_key.startsWith("team:")) return `team ${engine.owner ?? engine.share_key.slice(5)}`;
  return engine.owner ?? engine.share_key;
}

/** The engine runs the user's own jobs: their user key's, or a team of theirs. */
export function isOwn(engine: Pick<Engine, "owner" | "share_key">, user: Pick<User, "username" | "teams">): boolean {
  if (engine.owner === null) return false;
  if (engine.share_key.startsWith("user:")) return engine.owner === user.username;
  if (engine.share_key.startsWith("team:")) return user.teams.includes(engine.owner);
  return false;
}

/** Restart or stop may be asked: the engine runs (or starts) and nobody asked yet. */
export const mayAsk = (engine: Pick<Engine, "state" | "stop_requested">): boolean =>
  (engine.state === "STARTING" || engine.state === "READY") && engine.stop_requested === "";

/** Restart is offered on the user's own engine (the server also lets admins restart any). */
export const mayRestart = (engine: Engine, user: Pick<User, "username" | "teams" | "is_admin">): boolean =>
  mayAsk(engine) && (!user.is_admin || isOwn(engine, user));

/** Stop is the admins'. */
export const mayStop = (engine: Engine, user: Pick<User, "is_admin">): boolean => user.is_admin && mayAsk(engine);

/** "—" until it is ready, else how long it has been (or was) up. */
export function uptimeText(engine: Pick<Engine, "uptime_seconds">): string {
  return engine.uptime_seconds === null ? "—" : formatMillis(engine.uptime_seconds * 1000);
}

/** What a pending request says: "restart requested by alice". */
export function requestText(engine: Pick<Engine, "stop_requested" | "stop_requested_by">): string {
  if (!engine.stop_requested) return "";
  const by = engine.stop_requested_by ? ` by ${engine.stop_requested_by}` : "";
  return `${engine.stop_requested} requested${by}`;
}

/** Why it stopped, in words (the server's stop_reason codes). */
const REASONS: Record<string, string> = {
  idle: "idle",
  evicted: "made room for another engine",
  restart: "restarted",
  stop: "stopped by an admin",
  lost: "lost",
  shutdown: "worker shut down",
  failed_start: "failed to start",
};

export function stopReasonText(engine: Pick<Engine, "stop_reason">): string {
  return REASONS[engine.stop_reason] ?? engine.stop_reason;
}

/** The short form of an id shown in the table (the whole id is its title). */
export const shortId = (id: string): string => id.slice(0, 8);
