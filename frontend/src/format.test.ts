import { describe, expect, it } from "vitest";
import {
  countOf,
  formatBytes,
  formatClock,
  formatCount,
  formatDecimal,
  formatElapsed,
  formatMaybeMillis,
  formatMillis,
  formatPercent,
  formatTimestamp,
  formatUtc,
} from "./format";
import { summaryOf } from "./pages/editor/runSummary";
import type { Job } from "./api";

describe("counts", () => {
  it("groups thousands the same way whatever the browser's language", () => {
    expect(formatCount(50000)).toBe("50,000");
    expect(formatCount(1234567)).toBe("1,234,567");
    expect(formatCount(0)).toBe("0");
    expect(formatCount(2.6)).toBe("3");
  });

  it("says — for a count not known", () => {
    expect(formatCount(null)).toBe("—");
    expect(formatCount(undefined)).toBe("—");
    expect(formatCount(Number.NaN)).toBe("—");
    expect(formatCount(Infinity)).toBe("—");
  });

  it("names the noun in the singular for one only", () => {
    expect(countOf(1, "row")).toBe("1 row");
    expect(countOf(0, "row")).toBe("0 rows");
    expect(countOf(50000, "row")).toBe("50,000 rows");
    expect(countOf(2, "batch", "batches")).toBe("2 batches");
  });

  it("keeps decimals up to the digits asked, grouped", () => {
    expect(formatDecimal(1234.5678)).toBe("1,234.57");
    expect(formatDecimal(7.125, 2)).toBe("7.13");
    expect(formatDecimal(null)).toBe("—");
    expect(formatPercent(0.1234)).toBe("12.3%");
    expect(formatPercent(Number.NaN)).toBe("0.0%");
  });
});

describe("byte sizes", () => {
  it("are exact below 1 KiB and in binary units above", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(-5)).toBe("0 B");
    expect(formatBytes(1023)).toBe("1023 B");
    expect(formatBytes(1024)).toBe("1 KiB");
    expect(formatBytes(1536)).toBe("1.5 KiB");
    expect(formatBytes(10.25 * 1024 * 1024)).toBe("10.3 MiB");
    expect(formatBytes(50 * 1024 * 1024)).toBe("50 MiB");
    expect(formatBytes(300 * 1024 ** 3)).toBe("300 GiB");
    expect(formatBytes(2 * 1024 ** 6)).toBe("2048 PiB");
    expect(formatBytes(Number.NaN)).toBe("0 B");
  });
});

describe("durations", () => {
  it("are short and padded the same way for jobs, stages and the running clock", () => {
    expect(formatMillis(850)).toBe("850 ms");
    expect(formatMillis(245_000)).toBe("4 min 05 s");
    expect(formatMaybeMillis(185_000)).toBe("3 min 05 s");
    expect(formatElapsed(245_000)).toBe("4 min 05 s");
  });

  it("count tenths while a statement runs, never below zero", () => {
    expect(formatElapsed(0)).toBe("0.0 s");
    expect(formatElapsed(850)).toBe("0.8 s");
    expect(formatElapsed(12_340)).toBe("12.3 s");
    expect(formatElapsed(-10)).toBe("0.0 s");
    expect(formatElapsed(Number.NaN)).toBe("0.0 s");
  });

  it("say — when not known", () => {
    expect(formatMaybeMillis(null)).toBe("—");
    expect(formatMaybeMillis(undefined)).toBe("—");
    expect(formatMaybeMillis(-1)).toBe("—");
  });
});

describe("dates and times", () => {
  it("print every timestamp in one format, whatever it came as", () => {
    const iso = "2026-11-24T23:41:50Z";
    const shown = formatTimestamp(iso);
    expect(formatTimestamp(Date.parse(iso))).toBe(shown);
    expect(formatTimestamp(new Date(iso))).toBe(shown);
    // with the seconds, in the one style (not the browser's default toLocaleString)
    expect(shown).toContain(formatClock(iso).slice(-2));
    expect(shown).not.toBe(new Date(iso).toLocaleString());
  });

  it("say — for none and keep text that is not a date", () => {
    expect(formatTimestamp(null)).toBe("—");
    expect(formatTimestamp("")).toBe("—");
    expect(formatTimestamp("soon")).toBe("soon");
    expect(formatClock("nonsense")).toBe("—");
  });

  it("print engine instants in UTC", () => {
    expect(formatUtc("2026-11-24T23:41:50Z")).toBe("2026-11-24 23:41:50 UTC");
    expect(formatUtc("2026-11-24T23:41:50.250+00:00")).toBe("2026-11-24 23:41:50.250 UTC");
    expect(formatUtc("soon")).toBe("soon");
  });
});

describe("the run summary", () => {
  it("counts rows as the result's header does (50,000 rows, not 50000 rows)", async () => {
    const job = {
      id: "j",
      kind: "query",
      status: "FINISHED",
      result: { columns: [{ name: "id", data_type: "BIGINT" }], row_count: 50000, truncated: false },
    } as unknown as Job;
    expect(await summaryOf(job, null)).toBe(countOf(50000, "row"));
    expect(await summaryOf(job, null)).toBe("50,000 rows");
  });
});
