import { describe, expect, it } from "vitest";
import { browserTimeZone, runText } from "./schedules";

describe("runText", () => {
  it("says why a run failed", () => {
    expect(runText({ status: "FAILED", error: { code: "PERMISSION_DENIED", message: "No SELECT." } })).toBe(
      "FAILED: PERMISSION_DENIED — No SELECT.",
    );
  });
  it("names a run that waits", () => {
    expect(runText({ status: "SUBMITTED", error: null })).toBe("waiting or running");
    expect(runText({ status: "FINISHED", error: null })).toBe("FINISHED");
  });
});

describe("browserTimeZone", () => {
  it("is an IANA name", () => {
    expect(browserTimeZone()).toMatch(/^[A-Za-z_]+(\/[A-Za-z0-9_+-]+)*$/);
  });
});
