import { describe, expect, it } from "vitest";
import { tracebackFrames, tracebackText } from "./ErrorTraceback";

describe("tracebackFrames", () => {
  it("reads the frames of a pipeline error", () => {
    const frames = tracebackFrames({
      traceback: [
        { file: "tessera_pipelines/revenue.py", line: 12, function: "daily_revenue", code: "raise ValueError('x')" },
      ],
    });
    expect(frames).toHaveLength(1);
    expect(tracebackText(frames)).toBe(
      `  File "tessera_pipelines/revenue.py", line 12, in daily_revenue\n    raise ValueError('x')`,
    );
  });

  it("ignores anything that is not a list of frames", () => {
    expect(tracebackFrames(null)).toEqual([]);
    expect(tracebackFrames({ line: 2 })).toEqual([]);
    expect(tracebackFrames({ traceback: "no" })).toEqual([]);
    expect(tracebackFrames({ traceback: [1, null, { line: 3 }] })).toEqual([]);
    expect(tracebackText(tracebackFrames({ traceback: [{ file: "a.py" }] }))).toBe(
      `  File "a.py", line ?, in `,
    );
  });
});
