// A chart over the whole result (GET /jobs/{id}/result/chart: the server groups the rows by X,
// binning numbers and times, and aggregates Y into a bounded number of points), drawn as plain
// SVG: bar, line, area, scatter or pie, with time axes in calendar steps and room for labels.
import { useId, useLayoutEffect, useMemo, useRef, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { ApiError, enc, get, type ResultColumn } from "../../api";
import type { components } from "../../openapi/schema";
import { jobPath } from "../../data/jobs";
import { countOf, formatCount, formatDecimal, formatPercent } from "../../format";
import {
  AGGREGATIONS,
  CHART_TYPES,
  chartQuery,
  defaultChart,
  formatTime,
  formatTimeFull,
  labelRoom,
  parseTime,
  pointsFor,
  timeTicks,
  type Aggregation,
  type ChartConfig,
  type ChartType,
} from "./chartModel";
import { formatTick, isNumericType, labelIndices, niceTicks, truncate } from "./model";
import { isNestedType } from "./table";

type ChartOut = components["schemas"]["ResultChartOut"];

const PALETTE = [
  "#2453c7", "#d9822b", "#1f7a3f", "#b42318", "#7a4cc2", "#0f8a8a",
  "#a3720a", "#c2417a", "#5b8def", "#6b7280", "#84a83a", "#e0a4b8",
];
const HEIGHT = 380;
const MIN_HEIGHT = 220;
const AGG_LABEL: Record<Aggregation, string> = {
  none: "the rows themselves",
  sum: "sum",
  avg: "average",
  count: "count",
  min: "minimum",
  max: "maximum",
};

export function ResultChart({
  jobId,
  columns,
  rowCount,
  filters,
  config: given,
  onConfig,
  onSave,
  saved,
}: {
  jobId: string;
  columns: ResultColumn[];
  rowCount: number;
  filters: string[];
  config: ChartConfig | null;
  onConfig(config: ChartConfig): void;
  onSave?: () => void;
  saved: boolean;
}) {
  const id = useId();
  const config = useMemo(() => given ?? defaultChart(columns, rowCount), [given, columns, rowCount]);
  const numeric = useMemo(() => columns.filter((c) => isNumericType(c.data_type)), [columns]);
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(800);
  const [height, setHeight] = useState(HEIGHT);
  useLayoutEffect(() => {
    const element = box.current;
    const area = plot.current;
    if (!element) return;
    const measure = () => {
      setWidth(Math.max(360, Math.floor(element.clientWidth) - 2));
      // The chart fills the height it is given (and keeps a readable minimum).
      const free = area ? Math.floor(area.clientHeight) - 2 : 0;
      setHeight(free >= MIN_HEIGHT ? free : HEIGHT);
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    if (area) observer.observe(area);
    return () => observer.disconnect();
  }, []);
  const points = pointsFor(config.type, width - 120);
  const ready = !!config.x && (config.y.length > 0 || config.aggregation === "count");
  const search = chartQuery(config, points, filters);
  const query = useQuery({
    queryKey: ["jobs", jobPath(jobId), "result-chart", search],
    queryFn: ({ signal }) => get<ChartOut>(`/jobs/${enc(jobId)}/result/chart${search}`, { signal }),
    enabled: ready,
    placeholderData: (previous) => previous,
    staleTime: Infinity,
  });
  const set = (change: Partial<ChartConfig>) => onConfig({ ...config, ...change });
  const toggleY = (name: string) =>
    set({ y: config.y.includes(name) ? config.y.filter((n) => n !== name) : [...config.y, name] });

  if (numeric.length === 0 && config.aggregation !== "count")
    return (
      <div className="result-chart" ref={box}>
        <ChartControls config={config} columns={columns} numeric={numeric} set={set} toggleY={toggleY} onSave={onSave} saved={saved} />
        <div className="result-empty muted" data-testid="chart-empty">
          This result has no numeric column to chart; choose the aggregation count to count rows by X.
        </div>
      </div>
    );

  const data = query.data;
  return (
    <div className="result-chart" ref={box}>
      <ChartControls config={config} columns={columns} numeric={numeric} set={set} toggleY={toggleY} onSave={onSave} saved={saved} />
      {ready && data && !query.error && (
        <p className="muted chart-note" data-testid="chart-note">
          {chartNote(data, filters.length > 0)}
          {query.isPlaceholderData ? " Updating…" : ""}
        </p>
      )}
      <div className="chart-plot" ref={plot}>
        {!ready ? (
          <div className="result-empty muted">Choose one or more Y columns.</div>
        ) : query.error ? (
          <div className="alert" role="alert">
            {query.error instanceof ApiError ? query.error.message : "The chart could not be loaded."}
          </div>
        ) : !data ? (
          <div className="result-empty muted">Loading the chart…</div>
        ) : (
          <ChartSvg titleId={`${id}-title`} type={config.type} width={width} height={height} data={data} />
        )}
      </div>
    </div>
  );
}

function chartNote(data: ChartOut, filtered: boolean): string {
  const aggregation = data.aggregation as Aggregation;
  const rows = countOf(data.rows, filtered ? "matching row" : "row");
  const x = data.x_column.name;
  if (aggregation === "none")
    return data.sampled
      ? `Chart of all ${rows}: ${countOf(data.x.length, "row")} evenly sampled, in order of ${x}.`
      : `Chart of all ${rows}.`;
  const what = `${AGG_LABEL[aggregation]} of ${aggregation === "count" ? "rows" : data.series.map((s) => s.name).join(", ")}`;
  let per = `per ${x}`;
  if (data.binned) per = `per ${x} bin (${countOf(data.x.length, "bin")})`;
  let note = `Chart of all ${rows}: ${what} ${per}.`;
  if (data.omitted_groups > 0)
    note += ` The ${formatCount(data.x.length)} largest of ${countOf(data.groups, "group")} are shown.`;
  return note;
}

function ChartControls({
  config,
  columns,
  numeric,
  set,
  toggleY,
  onSave,
  saved,
}: {
  config: ChartConfig;
  columns: ResultColumn[];
  numeric: ResultColumn[];
  set(change: Partial<ChartConfig>): void;
  toggleY(name: string): void;
  onSave?: () => void;
  saved: boolean;
}) {
  return (
    <div className="chart-controls">
      <label>
        Chart type
        <select value={config.type} onChange={(e) => set({ type: e.target.value as ChartType })}>
          {CHART_TYPES.map((t) => (
            <option key={t} value={t}>
              {t[0].toUpperCase() + t.slice(1)}
            </option>
          ))}
        </select>
      </label>
      <label>
        X axis
        <select value={config.x} onChange={(e) => set({ x: e.target.value })}>
          {columns
            .filter((c) => !isNestedType(c.data_type))
            .map((c) => (
              <option key={c.name} value={c.name}>
                {c.name}
              </option>
            ))}
        </select>
      </label>
      <label>
        Aggregation
        <select value={config.aggregation} onChange={(e) => set({ aggregation: e.target.value as Aggregation })}>
          {AGGREGATIONS.map((a) => (
            <option key={a} value={a}>
              {a === "none" ? "none (rows)" : a}
            </option>
          ))}
        </select>
      </label>
      {config.aggregation !== "count" && (
        <fieldset>
          <legend>Y columns</legend>
          {numeric.map((c) => (
            <label key={c.name} className="inline">
              <input type="checkbox" checked={config.y.includes(c.name)} onChange={() => toggleY(c.name)} />
              {c.name}
            </label>
          ))}
        </fieldset>
      )}
      {onSave && (
        <button type="button" className="small" onClick={onSave} disabled={saved}>
          {saved ? "Chart saved with the query" : "Save chart with the query"}
        </button>
      )}
    </div>
  );
}

interface Scale {
  at(i: number): number;
  ticks: { x: number; label: string }[];
  rotate: boolean;
}

function ChartSvg({
  titleId,
  type,
  width,
  height,
  data,
}: {
  titleId: string;
  type: ChartType;
  width: number;
  height: number;
  data: ChartOut;
}) {
  const kind = data.x_column.kind;
  const n = data.x.length;
  const series = type === "pie" ? data.series.slice(0, 1) : data.series;
  const times = kind === "time" ? data.x.map(parseTime) : [];
  const xText = (i: number): string => {
    const v = data.x[i];
    if (v === null || v === undefined) return "NULL";
    if (kind === "time" && times[i] !== null) return formatTimeFull(times[i] as number);
    return typeof v === "string" ? v : String(v);
  };
  if (type === "pie") return <PieSvg titleId={titleId} width={width} height={height} data={data} label={xText} />;

  // Y scale and the room its labels take.
  const values = series.flatMap((s) => s.values.filter((v): v is number => v !== null));
  let min = values.length ? Math.min(...values) : 0;
  let max = values.length ? Math.max(...values) : 1;
  if (type === "bar" || type === "area") {
    min = Math.min(0, min);
    max = Math.max(0, max);
  }
  const yTicks = niceTicks(min, max, 5);
  const yLabels = yTicks.map(formatTick);
  const left = Math.max(44, labelRoom(yLabels).width + 16);

  // X: a continuous scale for lines, areas and scatters over numbers and times; else a slot
  // per point.
  const xNums = kind === "time" ? times : data.x.map((v) => (typeof v === "number" ? v : null));
  const continuous = type !== "bar" && kind !== "text" && xNums.every((v) => v !== null);
  const xs = xNums.filter((v): v is number => v !== null);
  const xMin = xs.length ? Math.min(...xs) : 0;
  const xMax = xs.length ? Math.max(...xs) : 1;
  const right = 24;
  const plotW = width - left - right;

  let scale: Scale;
  let bottomRoom: number;
  if (continuous) {
    const count = Math.max(2, Math.floor(plotW / 110));
    let ticks: { value: number; label: string }[];
    if (kind === "time") {
      const t = timeTicks(xMin, xMax, count);
      ticks = t.ticks.map((v) => ({ value: v, label: formatTime(v, t.step) }));
    } else {
      ticks = niceTicks(xMin, xMax, count).map((v) => ({ value: v, label: formatTick(v) }));
    }
    const lo = kind === "time" ? xMin : (ticks[0]?.value ?? xMin);
    const hi = kind === "time" ? xMax : (ticks[ticks.length - 1]?.value ?? xMax);
    const pos = (v: number) => left + ((v - lo) / (hi - lo || 1)) * plotW;
    const shown = ticks.filter((t) => t.value >= lo && t.value <= hi);
    scale = { at: (i) => pos(xNums[i] as number), ticks: shown.map((t) => ({ x: pos(t.value), label: t.label })), rotate: false };
    bottomRoom = 34;
  } else {
    const band = plotW / Math.max(1, n);
    // Bars over time: label with the calendar step between neighbours.
    const step = kind === "time" && n > 1 ? Math.abs((times[1] ?? 0) - (times[0] ?? 0)) || 86_400_000 : 86_400_000;
    const label = (i: number) =>
      kind === "time" && times[i] !== null ? formatTime(times[i] as number, step) : truncate(xText(i), 18).shown;
    const all = Array.from({ length: n }, (_, i) => label(i));
    const widest = labelRoom(all).width;
    const rotate = widest + 8 > band;
    const fit = rotate ? Math.max(2, Math.floor(plotW / 16)) : n;
    const picked = labelIndices(n, fit);
    scale = {
      at: (i) => left + band * (i + 0.5),
      ticks: picked.map((i) => ({ x: left + band * (i + 0.5), label: all[i] })),
      rotate,
    };
    bottomRoom = rotate ? labelRoom(picked.map((i) => all[i]), 40).height + 26 : 34;
  }
  const top = 34;
  const bottom = Math.min(150, bottomRoom + 14);
  const plotH = height - top - bottom;
  const yMin = yTicks[0] ?? min;
  const yMax = yTicks[yTicks.length - 1] ?? max;
  const y = (v: number) => top + plotH - ((v - yMin) / (yMax - yMin || 1)) * plotH;
  const zeroY = y(Math.max(yMin, Math.min(yMax, 0)));
  const band = plotW / Math.max(1, n);
  const groupW = band * 0.8;
  const barW = Math.max(0.5, groupW / Math.max(1, series.length));
  const order = Array.from({ length: n }, (_, i) => i);
  if (continuous) order.sort((a, b) => (xNums[a] as number) - (xNums[b] as number));
  const baseY = top + plotH;

  return (
    <svg
      className="chart-svg"
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-labelledby={titleId}
      data-testid="result-chart"
      data-type={type}
    >
      <title id={titleId}>{`${type[0].toUpperCase() + type.slice(1)} chart of ${series.map((s) => s.name).join(", ")} by ${data.x_column.name}`}</title>
      <g className="legend">
        {series.map((s, k) => (
          <g key={s.name + k} transform={`translate(${left + k * 150}, 12)`}>
            <rect width={12} height={12} fill={PALETTE[k % PALETTE.length]} rx={2} />
            <text x={16} y={10}>
              {truncate(s.name, 18).shown}
            </text>
          </g>
        ))}
      </g>
      <g className="axis y-axis">
        {yTicks.map((t, i) => (
          <g key={t}>
            <line className="grid-line" x1={left} x2={left + plotW} y1={y(t)} y2={y(t)} />
            <text x={left - 8} y={y(t) + 4} textAnchor="end">
              {yLabels[i]}
            </text>
          </g>
        ))}
        <line x1={left} x2={left} y1={top} y2={baseY} />
      </g>
      <g className="axis x-axis">
        <line x1={left} x2={left + plotW} y1={baseY} y2={baseY} />
        {scale.ticks.map((t, i) => (
          <g key={i}>
            <line x1={t.x} x2={t.x} y1={baseY} y2={baseY + 4} />
            <text
              x={t.x}
              y={baseY + 16}
              textAnchor={scale.rotate ? "end" : "middle"}
              transform={scale.rotate ? `rotate(-40 ${t.x} ${baseY + 16})` : undefined}
            >
              {t.label}
            </text>
          </g>
        ))}
        <text className="axis-name" x={left + plotW / 2} y={height - 6} textAnchor="middle">
          {data.x_column.name}
        </text>
      </g>
      {series.map((s, k) => {
        const color = PALETTE[k % PALETTE.length];
        const tip = (i: number) => `${xText(i)}: ${s.name} = ${s.values[i]}`;
        if (type === "bar")
          return (
            <g key={s.name + k} fill={color}>
              {s.values.map((v, i) =>
                v === null ? null : (
                  <rect
                    key={i}
                    x={left + band * i + (band - groupW) / 2 + barW * k}
                    y={Math.min(y(v), zeroY)}
                    width={barW}
                    height={Math.max(0.5, Math.abs(zeroY - y(v)))}
                  >
                    <title>{tip(i)}</title>
                  </rect>
                ),
              )}
            </g>
          );
        if (type === "scatter")
          return (
            <g key={s.name + k} fill={color} fillOpacity={0.7}>
              {order.map((i) =>
                s.values[i] === null ? null : (
                  <circle key={i} className="dot" cx={scale.at(i)} cy={y(s.values[i] as number)} r={3}>
                    <title>{tip(i)}</title>
                  </circle>
                ),
              )}
            </g>
          );
        // A line (and the area under it), broken where a value is NULL.
        let path = "";
        let area = "";
        let run: number[] = [];
        const closeRun = () => {
          if (run.length && type === "area")
            area += `M${scale.at(run[0]).toFixed(1)},${zeroY.toFixed(1)}${run.map((i) => `L${scale.at(i).toFixed(1)},${y(s.values[i] as number).toFixed(1)}`).join("")}L${scale.at(run[run.length - 1]).toFixed(1)},${zeroY.toFixed(1)}Z`;
          run = [];
        };
        for (const i of order) {
          const v = s.values[i];
          if (v === null) {
            closeRun();
            continue;
          }
          path += `${run.length ? "L" : "M"}${scale.at(i).toFixed(1)},${y(v).toFixed(1)}`;
          run.push(i);
        }
        closeRun();
        return (
          <g key={s.name + k}>
            {type === "area" && <path className="series-area" d={area} fill={color} fillOpacity={0.22} stroke="none" />}
            <path className="series-line" d={path} fill="none" stroke={color} strokeWidth={1.8} />
            {n <= 120 &&
              order.map((i) =>
                s.values[i] === null ? null : (
                  <circle key={i} cx={scale.at(i)} cy={y(s.values[i] as number)} r={2.5} fill={color}>
                    <title>{tip(i)}</title>
                  </circle>
                ),
              )}
          </g>
        );
      })}
    </svg>
  );
}

function pieSlices(values: number[], sum: number) {
  const slices: { i: number; v: number; start: number; sweep: number }[] = [];
  let angle = -Math.PI / 2;
  values.forEach((v, i) => {
    const sweep = (v / sum) * Math.PI * 2;
    slices.push({ i, v, start: angle, sweep });
    angle += sweep;
  });
  return slices;
}

function PieSvg({
  titleId,
  width,
  height,
  data,
  label,
}: {
  titleId: string;
  width: number;
  height: number;
  data: ChartOut;
  label(i: number): string;
}) {
  const values = (data.series[0]?.values ?? []).map((v) => (v !== null && v > 0 ? v : 0));
  const sum = values.reduce((a, b) => a + b, 0) || 1;
  const r = Math.min(height / 2 - 24, width / 4);
  const cx = r + 32;
  const cy = height / 2;
  const slices = pieSlices(values, sum);
  const point = (a: number) => `${(cx + r * Math.cos(a)).toFixed(2)},${(cy + r * Math.sin(a)).toFixed(2)}`;
  return (
    <svg
      className="chart-svg"
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-labelledby={titleId}
      data-testid="result-chart"
      data-type="pie"
    >
      <title id={titleId}>{`Pie chart of ${data.series[0]?.name ?? ""} by ${data.x_column.name}`}</title>
      {slices.map(({ i, v, start, sweep }) =>
        v <= 0 ? null : sweep >= Math.PI * 2 - 1e-9 ? (
          <circle key={i} className="slice" cx={cx} cy={cy} r={r} fill={PALETTE[i % PALETTE.length]}>
            <title>{`${label(i)}: ${v} (100%)`}</title>
          </circle>
        ) : (
          <path
            key={i}
            className="slice"
            d={`M${cx},${cy}L${point(start)}A${r},${r} 0 ${sweep > Math.PI ? 1 : 0} 1 ${point(start + sweep)}Z`}
            fill={PALETTE[i % PALETTE.length]}
            stroke="#fff"
          >
            <title>{`${label(i)}: ${formatDecimal(v, 6)} (${formatPercent(v / sum)})`}</title>
          </path>
        ),
      )}
      <g className="legend">
        {slices.map(({ i, v }) => (
          <g key={i} transform={`translate(${cx + r + 32}, ${24 + i * 22})`}>
            <rect width={12} height={12} fill={PALETTE[i % PALETTE.length]} rx={2} />
            <text x={18} y={10}>
              {`${truncate(label(i), 28).shown} — ${formatPercent(v / sum)}`}
            </text>
          </g>
        ))}
      </g>
    </svg>
  );
}
