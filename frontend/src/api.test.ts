import { describe, expect, it } from "vitest";

import { retryDelayMs } from "./api";

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
