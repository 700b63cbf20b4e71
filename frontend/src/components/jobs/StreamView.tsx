// The live view of a stream (docs/streaming.md): its latest micro-batch's figures, a small SVG chart of
// input vs processed rows/s and of batch duration over the latest batches, and the one-line
// summary the editor shows for a streaming write. The logic is in stream.ts.
import { useState } from "react";
import type { Job, JobEvent, StreamProgress } from "../../api";
import {
  SERIES_LENGTH,
  appendPoint,
  chartLines,
  formatBatchDuration,
  formatRate,
  formatWatermark,
  mergeSeries,
  pointFromProgress,
  pointsFromEvents,
  streamLine,
  type ChartBox,
  type StreamPoint,
} from "./stream";
import { formatClock, formatCount } from "../../format";
import "./jobs.css";

/** The latest batches of a followed job: each new `progress.stream` adds one, and the
 * job's `batch_committed` events (when given) fill in the ones no poll saw. */
export function useStreamSeries(job: Job, events: readonly JobEvent[] | null): StreamPoint[] {
  const [polled, setPolled] = useState<StreamPoint[]>([]);
  const stream = job.progress.stream ?? null;
  // Adjusting state while rendering (React's pattern for "derived from a changing prop").
  const [seen, setSeen] = useState<StreamProgress | null>(null);
  if (stream !== seen) {
    setSeen(stream);
    if (stream) setPolled((series) => appendPoint(series, pointFromProgress(stream)));
  }
  // A batch's event is written once, when it commits: its figures win over the polls'.
  const fromEvents = events ? pointsFromEvents(events) : [];
  return mergeSeries(polled, fromEvents, SERIES_LENGTH);
}

/** The figures of a stream's latest batch (the job page's panel). */
export function StreamFigures({ stream, select }: { stream: StreamProgress; select: boolean }) {
  return (
    <dl className="job-meta card stream-figures" data-testid="stream-figures">
      <dt>Input</dt>
      <dd data-testid="stream-input-rate">{formatRate(stream.input_rows_per_second)} rows/s</dd>
      <dt>Processed</dt>
      <dd data-testid="stream-processed-rate">{formatRate(stream.processed_rows_per_second)} rows/s</dd>
      <dt>Batch duration</dt>
      <dd data-testid="stream-batch-duration">{formatBatchDuration(stream.batch_duration_ms)}</dd>
      <dt>Batches</dt>
      <dd data-testid="stream-batches">
        {formatCount(stream.batches)} <span className="muted">(latest #{stream.batch_id})</span>
      </dd>
      <dt>Rows read</dt>
      <dd data-testid="stream-input-rows">
        {formatCount(stream.num_input_rows)} <span className="muted">(latest trigger)</span>
      </dd>
      <dt>Watermark</dt>
      <dd data-testid="stream-watermark">{formatWatermark(stream.watermark)}</dd>
      {!select && (
        <>
          <dt>Rows committed</dt>
          <dd data-testid="stream-rows-committed">{formatCount(stream.rows_committed)}</dd>
          <dt>Rows in the target</dt>
          <dd data-testid="stream-target-rows">{formatCount(stream.target_rows)}</dd>
        </>
      )}
      <dt>Updated</dt>
      <dd title={stream.updated_at}>{formatClock(stream.updated_at)}</dd>
    </dl>
  );
}

const RATE_BOX: ChartBox = { width: 560, height: 140, left: 52, top: 8, bottom: 18 };
const DURATION_BOX: ChartBox = { width: 560, height: 90, left: 52, top: 8, bottom: 18 };

function Plot({
  box,
  series,
  label,
  format,
  testId,
}: {
  box: ChartBox;
  series: { name: string; className: string; values: number[] }[];
  label: string;
  format(value: number): string;
  testId: string;
}) {
  const { yMax, lines } = chartLines(
    series.map((s) => s.values),
    box,
  );
  const bottom = box.height - box.bottom;
  return (
    <svg
      className="stream-chart"
      viewBox={`0 0 ${box.width} ${box.height}`}
      role="img"
      aria-label={label}
      data-testid={testId}
      data-points={series[0]?.values.length ?? 0}
    >
      <line className="axis" x1={box.left} y1={box.top} x2={box.left} y2={bottom} />
      <line className="axis" x1={box.left} y1={bottom} x2={box.width} y2={bottom} />
      <line className="grid" x1={box.left} y1={box.top} x2={box.width} y2={box.top} />
      <text className="tick" x={box.left - 4} y={box.top + 4} textAnchor="end">
        {format(yMax)}
      </text>
      <text className="tick" x={box.left - 4} y={bottom} textAnchor="end">
        0
      </text>
      {series.map((s, index) =>
        s.values.length === 1 ? (
          <circle key={s.name} className={s.className} r={3} cx={lines[index].split(",")[0]} cy={lines[index].split(",")[1]} />
        ) : (
          <polyline key={s.name} className={s.className} points={lines[index]} fill="none" />
        ),
      )}
    </svg>
  );
}

/** Input vs processed rows/s, and batch duration, over the latest batches. */
export function StreamChart({ points }: { points: readonly StreamPoint[] }) {
  if (points.length === 0)
    return <p className="muted" data-testid="stream-chart-empty">The chart starts with the first micro-batch.</p>;
  const first = points[0].batchId;
  const last = points[points.length - 1].batchId;
  return (
    <figure className="stream-charts" data-testid="stream-chart">
      <div className="stream-legend small-text">
        <span className="key key-input" /> input rows/s <span className="key key-processed" /> processed rows/s
      </div>
      <Plot
        box={RATE_BOX}
        label="Input and processed rows per second, per micro-batch"
        testId="stream-rate-chart"
        format={formatRate}
        series={[
          { name: "input", className: "line-input", values: points.map((p) => p.inputRps) },
          { name: "processed", className: "line-processed", values: points.map((p) => p.processedRps) },
        ]}
      />
      <div className="stream-legend small-text">
        <span className="key key-duration" /> batch duration
      </div>
      <Plot
        box={DURATION_BOX}
        label="Duration of each micro-batch"
        testId="stream-duration-chart"
        format={formatBatchDuration}
        series={[{ name: "duration", className: "line-duration", values: points.map((p) => p.durationMs) }]}
      />
      <figcaption className="muted small-text">
        {points.length === 1 ? `batch ${first}` : `batches ${first}–${last}`} (the latest {SERIES_LENGTH} at most)
      </figcaption>
    </figure>
  );
}

/** The editor's one line for a streaming write (or a SELECT before its tail shows). */
export function StreamLine({ stream, select }: { stream: StreamProgress; select: boolean }) {
  return (
    <span className="stream-line small-text" data-testid="stream-line">
      {streamLine(stream, select)}
    </span>
  );
}

/** The "Streaming" badge shown instead of a spinner while a stream runs. */
export function StreamingBadge() {
  return (
    <span className="badge streaming" data-testid="streaming-badge">
      <span className="pulse" aria-hidden="true" /> Streaming
    </span>
  );
}
