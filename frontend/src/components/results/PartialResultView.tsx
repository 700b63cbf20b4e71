// The rows of a result still being written (data/partialResults.ts): the first page as it fills,
// the live count of rows written, a "still running" marker — or, when the job failed or was
// canceled after rows arrived, those rows kept and marked as cut short. Sorting here sorts the
// rows shown; filters, downloads and server sort wait for the finished result (ResultView).
import { useMemo, useState } from "react";
import type { PartialResult } from "../../data/partialResults";
import { countOf, formatCount } from "../../format";
import { ResultGrid } from "./ResultGrid";
import { ValueViewer } from "./ValueViewer";
import { copyText } from "./clipboard";
import { cellText } from "./model";
import { formatRows, sortRows, togglePinned, withWidth, type SortSpec } from "./table";
import "./results.css";

/** The line above the rows: how many have arrived, and whether more may come. */
export function partialLine(partial: PartialResult, ended: "FAILED" | "CANCELED" | null): string {
  const count = countOf(partial.written, "row");
  if (ended === "FAILED") return `${count} arrived before the job failed — not the whole result`;
  if (ended === "CANCELED") return `${count} arrived before the job was canceled — not the whole result`;
  return `${count} so far`;
}

export function PartialResultView({
  partial,
  ended,
  height,
}: {
  partial: PartialResult;
  /** The job ended without finishing: the rows stay, marked as cut short. */
  ended: "FAILED" | "CANCELED" | null;
  /** Pixel height; default: fill the parent, as ResultView does. */
  height?: number;
}) {
  const [sort, setSort] = useState<SortSpec | null>(null);
  const [pinned, setPinned] = useState<number[]>([]);
  const [widths, setWidths] = useState<Record<number, number>>({});
  const [viewing, setViewing] = useState<{ value: unknown; column: number; row: number } | null>(null);
  const [notice, setNotice] = useState("");
  const { columns } = partial;
  const rows = useMemo(() => sortRows(partial.rows, sort, columns), [partial.rows, sort, columns]);
  const copy = (text: string, what: string) =>
    copyText(text).then(
      () => setNotice(`Copied ${what}`),
      () => setNotice("The browser did not allow copying."),
    );
  const more = partial.written > partial.rows.length;
  return (
    <section
      className={`result-view partial-result${ended ? " cut-short" : ""}`}
      style={height ? { height } : undefined}
      aria-label="Result so far"
      data-testid="partial-result"
      aria-busy={!ended}
    >
      <div className="toolbar result-toolbar">
        <span className="result-count" data-testid="partial-count" aria-live="polite">
          {partialLine(partial, ended)}
        </span>
        {!ended && (
          <span className="badge streaming" data-testid="still-running" title="The job is still writing its result: more rows may come">
            <span className="pulse" aria-hidden="true" /> Still running
          </span>
        )}
        {more && (
          <span className="muted small-text" data-testid="partial-shown">
            showing the first {formatCount(partial.rows.length)}
          </span>
        )}
        {sort && <span className="muted small-text">sorted: the rows shown only</span>}
        <span className="spacer" />
        <span className="muted result-notice" role="status">
          {notice}
        </span>
      </div>
      <div className="result-main">
        <ResultGrid
          columns={columns}
          rows={rows}
          offset={0}
          total={rows.length}
          sort={sort}
          onSort={setSort}
          onFilter={() =>
            setNotice(ended ? "These rows are not a result: run the statement again." : "Filters work once the result is complete.")
          }
          pinned={pinned}
          onPin={(column) => setPinned((current) => togglePinned(current, column))}
          widths={widths}
          onResize={(column, width) => setWidths((current) => withWidth(current, column, width))}
          onCopyValue={(value) => void copy(cellText(value) ?? "", "the value")}
          onCopyBlock={(block) => void copy(formatRows(block.columns, block.rows, "tsv"), "the cells")}
          onView={(value, column, row) => setViewing({ value, column, row })}
          onSelection={noop}
        />
      </div>
      {viewing && (
        <ValueViewer
          name={columns[viewing.column]?.name ?? ""}
          dataType={columns[viewing.column]?.data_type ?? ""}
          rowNumber={viewing.row}
          value={viewing.value}
          onCopy={(text) => void copy(text, "the value")}
          onClose={() => setViewing(null)}
        />
      )}
    </section>
  );
}

function noop(): void {}
