/** The frames a failed pipeline job reports (`error.details.traceback`): its own code only,
 * innermost last, as Python prints them. Nothing for any other error. */
export interface TracebackFrame {
  file: string;
  line: number | null;
  function: string;
  code: string;
}

export function tracebackFrames(details: unknown): TracebackFrame[] {
  if (details === null || typeof details !== "object") return [];
  const frames = (details as Record<string, unknown>)["traceback"];
  if (!Array.isArray(frames)) return [];
  return frames.flatMap((frame: unknown) => {
    if (frame === null || typeof frame !== "object") return [];
    const f = frame as Record<string, unknown>;
    if (typeof f["file"] !== "string") return [];
    return [
      {
        file: f["file"],
        line: typeof f["line"] === "number" ? f["line"] : null,
        function: typeof f["function"] === "string" ? f["function"] : "",
        code: typeof f["code"] === "string" ? f["code"] : "",
      },
    ];
  });
}

export function tracebackText(frames: TracebackFrame[]): string {
  return frames
    .map(
      (f) =>
        `  File "${f.file}", line ${f.line ?? "?"}, in ${f.function}` + (f.code ? `\n    ${f.code}` : ""),
    )
    .join("\n");
}

export function ErrorTraceback({ details }: { details: unknown }) {
  const frames = tracebackFrames(details);
  if (frames.length === 0) return null;
  return (
    <details className="error-traceback" open>
      <summary>Traceback (the pipeline's own frames, most recent call last)</summary>
      <pre data-testid="job-traceback">{tracebackText(frames)}</pre>
    </details>
  );
}
