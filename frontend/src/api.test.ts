import { afterEach, describe, expect, it, vi } from "vitest";

import { ApiError, abortError, get, isAbort, retryDelayMs, sleep } from "./api";

describe("retryDelayMs", () => {
  it("retries a short 429 a few times, waiting longer each time", () => {
    expect(retryDelayMs(429, "1", 0)).toBe(1000);
    expect(retryDelayMs(429, "1", 1)).toBe(2000);
    expect(retryDelayMs(429, "1", 2)).toBe(3000);
    expect(retryDelayMs(429, "1", 3)).toBeNull();
  });

  it("waits at least a moment when the server says 0", () => {
    expect(retryDelayMs(429, "0", 0)).toBe(200);
    expect(retryDelayMs(429, null, 0)).toBe(1000);
  });

  it("shows long waits and other statuses instead of retrying", () => {
    expect(retryDelayMs(429, "60", 0)).toBeNull(); // sign-in throttling
    expect(retryDelayMs(429, "soon", 0)).toBeNull();
    expect(retryDelayMs(500, "1", 0)).toBeNull();
    expect(retryDelayMs(200, null, 0)).toBeNull();
  });
});

describe("api()", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("sends a request refused with a short 429 again, and answers the retry", async () => {
    const fetch = vi
      .fn()
      .mockResolvedValueOnce(new Response("", { status: 429, headers: { "Retry-After": "0" } }))
      .mockResolvedValueOnce(new Response(JSON.stringify({ ok: true }), { status: 200 }));
    vi.stubGlobal("fetch", fetch);
    await expect(get<{ ok: boolean }>("/x")).resolves.toEqual({ ok: true });
    expect(fetch).toHaveBeenCalledTimes(2);
  });

  it("gives up on a long 429 and shows the server's error", async () => {
    const body = { error: { code: "THROTTLED", message: "Slow down." } };
    vi.stubGlobal("fetch", vi.fn(async () => new Response(JSON.stringify(body), { status: 429, headers: { "Retry-After": "60" } })));
    await expect(get("/x")).rejects.toMatchObject({ status: 429, code: "THROTTLED" });
  });

  it("stops waiting to retry as soon as the request is aborted", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => new Response("", { status: 429, headers: { "Retry-After": "2" } })));
    const controller = new AbortController();
    const request = get("/x", { signal: controller.signal });
    setTimeout(() => controller.abort(), 10);
    const error = await request.catch((e: unknown) => e);
    expect(isAbort(error)).toBe(true);
  });

  it("turns a failed connection into NETWORK_ERROR, but lets an abort through", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => Promise.reject(new TypeError("Failed to fetch"))));
    await expect(get("/x")).rejects.toBeInstanceOf(ApiError);
    vi.stubGlobal("fetch", vi.fn(async () => Promise.reject(abortError())));
    expect(isAbort(await get("/x").catch((e: unknown) => e))).toBe(true);
  });
});

describe("sleep", () => {
  it("rejects with an AbortError when the signal aborts", async () => {
    const controller = new AbortController();
    const waiting = sleep(10_000, controller.signal);
    controller.abort();
    expect(isAbort(await waiting.catch((e: unknown) => e))).toBe(true);
  });
});
