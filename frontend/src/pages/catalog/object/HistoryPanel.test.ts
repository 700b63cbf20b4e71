import { describe, expect, it } from "vitest";
import { metricsText, versionQuery } from "./HistoryPanel";

describe("history panel helpers", () => {
  it("reads one version with VERSION AS OF", () => {
    expect(versionQuery("`c`.`d`.`t`", 3)).toBe("SELECT * FROM `c`.`d`.`t` VERSION AS OF 3 LIMIT 100");
  });

  it("shows metrics as key and value, nothing when there are none", () => {
    expect(metricsText({})).toBe("");
    expect(metricsText(null)).toBe("");
    expect(metricsText({ rows_upserted: 3, rows_deleted: 1 })).toBe("rows_upserted 3, rows_deleted 1");
    expect(metricsText({ nested: { a: 1 } })).toBe('nested {"a":1}');
  });
});
