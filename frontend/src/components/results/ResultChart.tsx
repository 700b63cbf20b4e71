// A bar or line chart of the current page's rows, drawn as plain SVG (no chart library).
import { useId, useLayoutEffect, useMemo, useRef, useState } from "react";
import type { ResultColumn } from "../../api";
import { chartData, formatTick, isNumericType, labelIndices, niceTicks, truncate } from "./model";

const PALETTE = ["#2453c7", "#d9822b", "#1f7a3f", "#b42318", "#7a4cc2", "#0f8a8a", "#a3720a", "#c2417a"];
const HEIGHT = 360;
const MARGIN = { top: 34, right: 20, bottom: 64, left: 64 };

export function ResultChart({
  columns,
  rows,
  note,
}: {
  columns: ResultColumn[];
  rows: unknown[][];
  note: string;
}) {
  const id = useId();
  const numericIndices = useMemo(
    () => columns.flatMap((c, i) => (isNumericType(c.data_type) ? [i] : [])),
    [columns],
  );
  const defaultX = useMemo(() => {
    const firstText = columns.findIndex((c) => !isNumericType(c.data_type));
    return firstText >= 0 ? firstText : 0;
  }, [columns]);
  const [kind, setKind] = useState<"bar" | "line">("bar");
  const [xIndex, setXIndex] = useState(defaultX);
  const [yIndices, setYIndices] = useState<number[]>(() => {
    const first = numericIndices.find((i) => i !== defaultX);
    return first === undefined ? [] : [first];
  });

  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(800);
  useLayoutEffect(() => {
    const element = box.current;
    if (!element) return;
    const measure = () => setWidth(Math.max(320, Math.floor(element.clientWidth) - 2));
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  const toggleY = (index: number) =>
    setYIndices((current) =>
      current.includes(index) ? current.filter((i) => i !== index) : [...current, index].sort((a, b) => a - b),
    );

  if (numericIndices.length === 0)
    return (
      <div className="result-empty muted" data-testid="chart-empty">
        This result has no numeric column to chart.
      </div>
    );

  return (
    <div className="result-chart" ref={box}>
      <div className="chart-controls">
        <label>
          Chart type
          <select value={kind} onChange={(e) => setKind(e.target.value as "bar" | "line")}>
            <option value="bar">Bar</option>
            <option value="line">Line</option>
          </select>
        </label>
        <label>
          X axis
          <select value={xIndex} onChange={(e) => setXIndex(Number(e.target.value))}>
            {columns.map((c, i) => (
              <option key={i} value={i}>
                {c.name}
              </option>
            ))}
          </select>
        </label>
        <fieldset>
          <legend>Y columns</legend>
          {numericIndices.map((i) => (
            <label key={i} className="inline">
              <input type="checkbox" checked={yIndices.includes(i)} onChange={() => toggleY(i)} />
              {columns[i].name}
            </label>
          ))}
        </fieldset>
      </div>
      <p className="muted chart-note">{note}</p>
      {yIndices.length === 0 ? (
        <div className="result-empty muted">Choose one or more Y columns.</div>
      ) : (
        <ChartSvg
          titleId={`${id}-title`}
          kind={kind}
          width={width}
          data={chartData(rows, xIndex, yIndices, columns)}
          xName={columns[xIndex]?.name ?? ""}
          xNumeric={isNumericType(columns[xIndex]?.data_type ?? "")}
        />
      )}
    </div>
  );
}

function ChartSvg({
  titleId,
  kind,
  width,
  data,
  xName,
  xNumeric,
}: {
  titleId: string;
  kind: "bar" | "line";
  width: number;
  data: ReturnType<typeof chartData>;
  xName: string;
  xNumeric: boolean;
}) {
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const n = data.x.length;

  const values = data.series.flatMap((s) => s.values.filter((v): v is number => v !== null));
  let min = values.length ? Math.min(...values) : 0;
  let max = values.length ? Math.max(...values) : 1;
  if (kind === "bar") {
    min = Math.min(0, min);
    max = Math.max(0, max);
  }
  const yTicks = niceTicks(min, max, 5);
  const yMin = yTicks[0] ?? min;
  const yMax = yTicks[yTicks.length - 1] ?? max;
  const y = (v: number) => MARGIN.top + plotH - ((v - yMin) / (yMax - yMin || 1)) * plotH;

  // X: a linear scale for a line over a numeric X column, else one slot per row.
  const linearX = kind === "line" && xNumeric && data.xNumbers.every((v) => v !== null);
  const xs = data.xNumbers.filter((v): v is number => v !== null);
  const xTicks = linearX ? niceTicks(Math.min(...xs), Math.max(...xs), Math.max(2, Math.floor(plotW / 90))) : [];
  const xLo = xTicks[0] ?? 0;
  const xHi = xTicks[xTicks.length - 1] ?? 1;
  const band = plotW / Math.max(1, n);
  const xAt = (i: number) =>
    linearX
      ? MARGIN.left + (((data.xNumbers[i] as number) - xLo) / (xHi - xLo || 1)) * plotW
      : MARGIN.left + band * (i + 0.5);
  const labels = linearX ? [] : labelIndices(n, Math.max(2, Math.floor(plotW / 80)));
  const zeroY = y(Math.max(yMin, Math.min(yMax, 0)));
  const groupW = band * 0.8;
  const barW = Math.max(0.5, groupW / Math.max(1, data.series.length));

  // Lines are drawn in X order so a numeric X gives a proper line.
  const order = Array.from({ length: n }, (_, i) => i);
  if (linearX) order.sort((a, b) => (data.xNumbers[a] as number) - (data.xNumbers[b] as number));

  return (
    <svg
      className="chart-svg"
      width={width}
      height={HEIGHT}
      viewBox={`0 0 ${width} ${HEIGHT}`}
      role="img"
      aria-labelledby={titleId}
      data-testid="result-chart"
    >
      <title id={titleId}>
        {`${kind === "bar" ? "Bar" : "Line"} chart of ${data.series.map((s) => s.name).join(", ")} by ${xName}`}
      </title>
      {/* Legend */}
      <g className="legend">
        {data.series.map((s, k) => (
          <g key={s.name + k} transform={`translate(${MARGIN.left + k * 140}, 12)`}>
            <rect width={12} height={12} fill={PALETTE[k % PALETTE.length]} rx={2} />
            <text x={16} y={10}>
              {truncate(s.name, 16).shown}
            </text>
          </g>
        ))}
      </g>
      {/* Y axis, grid lines and ticks */}
      <g className="axis y-axis">
        {yTicks.map((t) => (
          <g key={t}>
            <line className="grid-line" x1={MARGIN.left} x2={MARGIN.left + plotW} y1={y(t)} y2={y(t)} />
            <line x1={MARGIN.left - 4} x2={MARGIN.left} y1={y(t)} y2={y(t)} />
            <text x={MARGIN.left - 8} y={y(t) + 4} textAnchor="end">
              {formatTick(t)}
            </text>
          </g>
        ))}
        <line x1={MARGIN.left} x2={MARGIN.left} y1={MARGIN.top} y2={MARGIN.top + plotH} />
      </g>
      {/* X axis and ticks */}
      <g className="axis x-axis">
        <line x1={MARGIN.left} x2={MARGIN.left + plotW} y1={MARGIN.top + plotH} y2={MARGIN.top + plotH} />
        {linearX
          ? xTicks.map((t) => {
              const px = MARGIN.left + ((t - xLo) / (xHi - xLo || 1)) * plotW;
              return (
                <g key={t}>
                  <line x1={px} x2={px} y1={MARGIN.top + plotH} y2={MARGIN.top + plotH + 4} />
                  <text x={px} y={MARGIN.top + plotH + 16} textAnchor="middle">
                    {formatTick(t)}
                  </text>
                </g>
              );
            })
          : labels.map((i) => (
              <g key={i}>
                <line x1={xAt(i)} x2={xAt(i)} y1={MARGIN.top + plotH} y2={MARGIN.top + plotH + 4} />
                <text
                  x={xAt(i)}
                  y={MARGIN.top + plotH + 14}
                  textAnchor="end"
                  transform={`rotate(-30 ${xAt(i)} ${MARGIN.top + plotH + 14})`}
                >
                  {truncate(data.x[i] ?? "NULL", 14).shown}
                </text>
              </g>
            ))}
        <text x={MARGIN.left + plotW / 2} y={HEIGHT - 6} textAnchor="middle">
          {xName}
        </text>
      </g>
      {/* Data */}
      {data.series.map((s, k) => {
        const color = PALETTE[k % PALETTE.length];
        if (kind === "bar")
          return (
            <g key={s.name + k} fill={color}>
              {s.values.map((v, i) =>
                v === null ? null : (
                  <rect
                    key={i}
                    x={MARGIN.left + band * i + (band - groupW) / 2 + barW * k}
                    y={Math.min(y(v), zeroY)}
                    width={barW}
                    height={Math.max(0.5, Math.abs(zeroY - y(v)))}
                  >
                    <title>{`${data.x[i] ?? "NULL"}: ${s.name} = ${v}`}</title>
                  </rect>
                ),
              )}
            </g>
          );
        // A line, broken where a value is NULL.
        let path = "";
        let pen = false;
        for (const i of order) {
          const v = s.values[i];
          if (v === null) {
            pen = false;
            continue;
          }
          path += `${pen ? "L" : "M"}${xAt(i).toFixed(1)},${y(v).toFixed(1)}`;
          pen = true;
        }
        return (
          <g key={s.name + k}>
            <path d={path} fill="none" stroke={color} strokeWidth={1.8} />
            {n <= 200 &&
              order.map((i) =>
                s.values[i] === null ? null : (
                  <circle key={i} cx={xAt(i)} cy={y(s.values[i] as number)} r={2.5} fill={color}>
                    <title>{`${data.x[i] ?? "NULL"}: ${s.name} = ${s.values[i]}`}</title>
                  </circle>
                ),
              )}
          </g>
        );
      })}
    </svg>
  );
}
