import { describe, expect, it } from "vitest";
import type { Engine } from "../../api";
import { isLive, isOwn, mayRestart, mayStop, ownerText, requestText, stopReasonText, uptimeText } from "./engines";

const ENGINE: Engine = {
  id: "0b7c9e8a-1111-2222-3333-444455556666",
  share_level: "user",
  share_key: "user:3",
  owner: "alice",
  runtime: "local",
  state: "READY",
  pid: 4242,
  driver_memory: "2g",
  started_at: "2026-01-01T10:00:00Z",
  ready_at: "2026-01-01T10:00:05Z",
  last_used_at: "2026-01-01T10:30:00Z",
  stopped_at: null,
  stop_reason: "",
  stop_message: "",
  running_jobs: 1,
  uptime_seconds: 3725,
  stop_requested: "",
  stop_requested_by: "",
};
const ALICE = { username: "alice", teams: ["analysts"], is_admin: false };
const ADMIN = { username: "root", teams: [], is_admin: true };

describe("engines", () => {
  it("names the owner", () => {
    expect(ownerText(ENGINE)).toBe("alice");
    expect(ownerText({ owner: "analysts", share_key: "team:analysts" })).toBe("team analysts");
    expect(ownerText({ owner: "everyone", share_key: "server" })).toBe("everyone");
    expect(ownerText({ owner: null, share_key: "" })).toBe("spare (not assigned yet)");
  });
  it("knows the user's own engines", () => {
    expect(isOwn(ENGINE, ALICE)).toBe(true);
    expect(isOwn({ ...ENGINE, owner: "bob" }, ALICE)).toBe(false);
    expect(isOwn({ ...ENGINE, share_key: "team:analysts", owner: "analysts" }, ALICE)).toBe(true);
    expect(isOwn({ ...ENGINE, share_key: "team:ops", owner: "ops" }, ALICE)).toBe(false);
    expect(isOwn({ ...ENGINE, share_key: "server", owner: "everyone" }, ALICE)).toBe(false);
    expect(isOwn({ ...ENGINE, share_key: "", owner: null }, ALICE)).toBe(false);
  });
  it("offers restart on the user's own live engine and stop to admins", () => {
    expect(mayRestart(ENGINE, ALICE)).toBe(true);
    expect(mayStop(ENGINE, ALICE)).toBe(false);
    expect(mayRestart({ ...ENGINE, state: "STOPPING" }, ALICE)).toBe(false);
    expect(mayRestart({ ...ENGINE, state: "STOPPED" }, ALICE)).toBe(false);
    expect(mayRestart({ ...ENGINE, stop_requested: "restart" }, ALICE)).toBe(false);
    expect(mayRestart(ENGINE, ADMIN)).toBe(false); // alice's, not the admin's own
    expect(mayRestart({ ...ENGINE, owner: "root" }, ADMIN)).toBe(true);
    expect(mayStop(ENGINE, ADMIN)).toBe(true);
    expect(mayStop({ ...ENGINE, state: "LOST" }, ADMIN)).toBe(false);
    expect(isLive({ state: "STARTING" })).toBe(true);
    expect(isLive({ state: "LOST" })).toBe(false);
  });
  it("says uptime, requests and reasons in words", () => {
    expect(uptimeText(ENGINE)).toBe("1 h 02 min");
    expect(uptimeText({ uptime_seconds: null })).toBe("—");
    expect(requestText(ENGINE)).toBe("");
    expect(requestText({ stop_requested: "restart", stop_requested_by: "alice" })).toBe("restart requested by alice");
    expect(stopReasonText({ stop_reason: "evicted" })).toBe("made room for another engine");
    expect(stopReasonText({ stop_reason: "something_new" })).toBe("something_new");
  });
});
