// The virtualised grid of one page: row numbers, typed headers with a sort toggle and a column
// menu (sort, filter, pin, stats on the page), resizable and pinnable columns, and a cell
// selection (click, Shift+click, arrows, Shift+arrows) that Ctrl/Cmd-C copies and Enter opens
// in the value viewer.
import {
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type KeyboardEvent,
  type MouseEvent,
  type PointerEvent,
} from "react";
import { HeaderName } from "./HeaderName";
import type { ResultColumn } from "../../api";
import { countOf, formatCount } from "../../format";
import { ROW_HEIGHT, cellText, columnWidths, isNumericType, scrollToShow, truncate, visibleWindow } from "./model";
import {
  columnOrder,
  columnStats,
  isNestedType,
  pinnedOffsets,
  resized,
  selectedBlock,
  selectionRect,
  type Cell,
  type SortSpec,
} from "./table";

export const HEADER_HEIGHT = 40;
const ROWNUM_WIDTH = 64;
const MENU_ROOM = 22;

export interface GridProps {
  columns: ResultColumn[];
  rows: unknown[][];
  /** Row number of the first row, minus one. */
  offset: number;
  total: number;
  sort: SortSpec | null;
  onSort(sort: SortSpec | null): void;
  onFilter(column: number): void;
  pinned: number[];
  onPin(column: number): void;
  widths: Record<number, number>;
  onResize(column: number, width: number | null): void;
  /** A single value (Ctrl+C on one cell). */
  onCopyValue(value: unknown): void;
  /** Several cells (Ctrl+C on a selection). */
  onCopyBlock(block: { columns: { name: string }[]; rows: unknown[][] }): void;
  onView(value: unknown, column: number, rowNumber: number): void;
  /** The selection changed: its block, or null for none. */
  onSelection(block: { columns: { name: string }[]; rows: unknown[][] } | null): void;
}

export function ResultGrid(props: GridProps) {
  const { columns, rows, offset, total, sort, pinned, widths: overrides } = props;
  const scroller = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [anchor, setAnchor] = useState<Cell | null>(null);
  const [focus, setFocus] = useState<Cell | null>(null);
  const [menu, setMenu] = useState<{ column: number; x: number; y: number } | null>(null);
  const [viewport, setViewport] = useState(600);
  const frame = useRef<number | null>(null);
  // Set by a keyboard move: once the moved-to cell is rendered, bring it into view in the page
  // too (the grid may reach below the window, so its own scrolling is not always enough).
  const revealFocus = useRef(false);

  // Fitted widths, plus room for the header's menu button.
  const auto = useMemo(() => columnWidths(columns, rows).map((w) => w + MENU_ROOM), [columns, rows]);
  const widths = useMemo(() => auto.map((w, i) => overrides[i] ?? w), [auto, overrides]);
  const numeric = useMemo(() => columns.map((c) => isNumericType(c.data_type)), [columns]);
  const order = useMemo(() => columnOrder(columns.length, pinned), [columns.length, pinned]);
  const lefts = useMemo(
    () => pinnedOffsets(order, pinned.length, widths, ROWNUM_WIDTH),
    [order, pinned.length, widths],
  );
  const fullWidth = ROWNUM_WIDTH + widths.reduce((sum, w) => sum + w, 0);

  useLayoutEffect(() => {
    const element = scroller.current;
    if (!element) return;
    setViewport(element.clientHeight);
    const observer = new ResizeObserver(() => setViewport(element.clientHeight));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  // New rows start at their top, with nothing selected.
  const [rowsShown, setRowsShown] = useState(rows);
  if (rowsShown !== rows) {
    setRowsShown(rows);
    setScrollTop(0);
    setAnchor(null);
    setFocus(null);
  }
  useLayoutEffect(() => {
    if (scroller.current) scroller.current.scrollTop = 0;
  }, [rows]);

  const { onSelection } = props;
  useEffect(() => {
    onSelection(anchor && focus ? selectedBlock(rows, columns, order, anchor, focus) : null);
  }, [anchor, focus, rows, columns, order, onSelection]);

  const cellAt = (event: MouseEvent<HTMLDivElement>): Cell | null => {
    const cell = (event.target as HTMLElement).closest<HTMLElement>("[data-col]");
    const row = cell?.parentElement?.dataset.row;
    if (!cell || row === undefined) return null;
    return { row: Number(row), col: Number(cell.dataset.pos) };
  };

  const onMouseDown = (event: MouseEvent<HTMLDivElement>) => {
    const cell = cellAt(event);
    if (!cell) return;
    if (event.shiftKey && anchor) {
      event.preventDefault();
      setFocus(cell);
    } else {
      setAnchor(cell);
      setFocus(cell);
    }
  };

  const onDoubleClick = (event: MouseEvent<HTMLDivElement>) => {
    const cell = cellAt(event);
    if (!cell) return;
    const column = order[cell.col];
    props.onView(rows[cell.row]?.[column], column, offset + cell.row + 1);
  };

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (!focus || !anchor) return;
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "c") {
      if (window.getSelection()?.toString()) return; // the user selected text: copy that
      event.preventDefault();
      if (anchor.row === focus.row && anchor.col === focus.col)
        props.onCopyValue(rows[focus.row]?.[order[focus.col]]);
      else props.onCopyBlock(selectedBlock(rows, columns, order, anchor, focus));
      return;
    }
    if (event.key === "Enter") {
      event.preventDefault();
      const column = order[focus.col];
      props.onView(rows[focus.row]?.[column], column, offset + focus.row + 1);
      return;
    }
    if (event.key === "Escape") {
      setAnchor(null);
      setFocus(null);
      return;
    }
    const moves: Record<string, [number, number]> = {
      ArrowUp: [-1, 0],
      ArrowDown: [1, 0],
      ArrowLeft: [0, -1],
      ArrowRight: [0, 1],
    };
    const move = moves[event.key];
    if (!move) return;
    event.preventDefault();
    const row = Math.max(0, Math.min(rows.length - 1, focus.row + move[0]));
    const col = Math.max(0, Math.min(columns.length - 1, focus.col + move[1]));
    setFocus({ row, col });
    if (!event.shiftKey) setAnchor({ row, col });
    revealFocus.current = true;
    const element = scroller.current;
    if (element) {
      const top = scrollToShow(row, element.scrollTop, element.clientHeight, HEADER_HEIGHT);
      if (top !== element.scrollTop) element.scrollTop = top;
    }
  };

  useEffect(
    () => () => {
      if (frame.current !== null) cancelAnimationFrame(frame.current);
    },
    [],
  );

  const onScroll = useCallback(() => {
    if (frame.current !== null) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = null;
      if (scroller.current) setScrollTop(scroller.current.scrollTop);
    });
  }, []);

  const { start, end } = visibleWindow(scrollTop, viewport, rows.length);

  useEffect(() => {
    if (!revealFocus.current || !focus || !scroller.current) return;
    const cell = scroller.current.querySelector<HTMLElement>(
      `[data-row="${focus.row}"] [data-pos="${focus.col}"]`,
    );
    if (!cell) return; // not rendered yet: the window follows the scroll, then this runs again
    revealFocus.current = false;
    cell.scrollIntoView({ block: "nearest", inline: "nearest" });
  }, [focus, start]);
  const visible = rows.slice(start, end);
  const rect = anchor && focus ? selectionRect(anchor, focus) : null;
  const inRect = (row: number, pos: number) =>
    !!rect && row >= rect.top && row <= rect.bottom && pos >= rect.left && pos <= rect.right;

  const cycleSort = (column: number) => {
    if (isNestedType(columns[column].data_type)) return;
    if (sort?.column !== column) props.onSort({ column, dir: "asc" });
    else if (sort.dir === "asc") props.onSort({ column, dir: "desc" });
    else props.onSort(null);
  };

  return (
    <div className="rv-frame">
      <div
        ref={scroller}
        className="rv-scroll"
        onScroll={onScroll}
        onMouseDown={onMouseDown}
        onDoubleClick={onDoubleClick}
        onKeyDown={onKeyDown}
        tabIndex={0}
        role="grid"
        aria-label="Result rows"
        aria-rowcount={total + 1}
        aria-colcount={columns.length + 1}
        aria-multiselectable="true"
        data-testid="result-grid"
      >
        <div className="rv-inner" style={{ width: fullWidth }}>
          <div className="rv-header" role="row" aria-rowindex={1} style={{ height: HEADER_HEIGHT }}>
            <div className="rv-cell rv-rownum" role="columnheader" style={{ width: ROWNUM_WIDTH }}>
              #
            </div>
            {order.map((index) => {
              const column = columns[index];
              const sorted = sort?.column === index ? sort.dir : null;
              const left = lefts.get(index);
              return (
                <div
                  key={index}
                  className={`rv-cell rv-head${numeric[index] ? " num" : ""}${left !== undefined ? " pinned" : ""}`}
                  role="columnheader"
                  aria-sort={sorted === "asc" ? "ascending" : sorted === "desc" ? "descending" : undefined}
                  data-column={column.name}
                  style={{ width: widths[index], left }}
                  title={`${column.name} ${column.data_type} — click to sort`}
                  onClick={() => cycleSort(index)}
                >
                  <HeaderName name={column.name} sorted={sorted} />
                  <span className="rv-coltype">{column.data_type}</span>
                  <button
                    type="button"
                    className="rv-menubtn"
                    aria-label={`Column menu: ${column.name}`}
                    aria-haspopup="menu"
                    aria-expanded={menu?.column === index}
                    onMouseDown={(event) => event.stopPropagation()}
                    onClick={(event) => {
                      event.stopPropagation();
                      const box = event.currentTarget.getBoundingClientRect();
                      setMenu(menu?.column === index ? null : { column: index, x: box.left, y: box.bottom + 2 });
                    }}
                  />
                  <ResizeHandle
                    width={widths[index]}
                    onResize={(w) => props.onResize(index, w)}
                    name={column.name}
                  />
                </div>
              );
            })}
          </div>
          <div className="rv-body" style={{ height: rows.length * ROW_HEIGHT }} role="rowgroup">
            <div className="rv-window" style={{ top: start * ROW_HEIGHT }}>
              {visible.map((row, i) => {
                const number = offset + start + i + 1;
                return (
                  <div
                    key={start + i}
                    className="rv-row"
                    role="row"
                    aria-rowindex={number + 1}
                    data-row={start + i}
                    style={{ height: ROW_HEIGHT }}
                  >
                    <div className="rv-cell rv-rownum" role="rowheader" style={{ width: ROWNUM_WIDTH }}>
                      {number}
                    </div>
                    {order.map((c, pos) => (
                      <GridCell
                        key={c}
                        col={c}
                        pos={pos}
                        value={row[c]}
                        width={widths[c]}
                        left={lefts.get(c)}
                        numeric={numeric[c]}
                        selected={inRect(start + i, pos)}
                      />
                    ))}
                  </div>
                );
              })}
            </div>
          </div>
        </div>
      </div>
      {menu && (
        <ColumnMenu
          column={columns[menu.column]}
          x={menu.x}
          y={menu.y}
          sort={sort?.column === menu.column ? sort.dir : null}
          pinned={pinned.includes(menu.column)}
          rows={rows}
          index={menu.column}
          onClose={() => setMenu(null)}
          onSort={(dir) => props.onSort(dir ? { column: menu.column, dir } : null)}
          onFilter={() => props.onFilter(menu.column)}
          onPin={() => props.onPin(menu.column)}
          onResetWidth={() => props.onResize(menu.column, null)}
        />
      )}
    </div>
  );
}

function ResizeHandle({ width, onResize, name }: { width: number; onResize(width: number | null): void; name: string }) {
  const drag = useRef<{ x: number; width: number } | null>(null);
  return (
    <div
      className="rv-resize"
      role="separator"
      aria-orientation="vertical"
      aria-label={`Resize column ${name}`}
      onClick={(event) => event.stopPropagation()}
      onMouseDown={(event) => event.stopPropagation()}
      onDoubleClick={(event) => {
        event.stopPropagation();
        onResize(null);
      }}
      onPointerDown={(event: PointerEvent<HTMLDivElement>) => {
        event.stopPropagation();
        event.preventDefault();
        event.currentTarget.setPointerCapture(event.pointerId);
        drag.current = { x: event.clientX, width };
      }}
      onPointerMove={(event) => {
        if (drag.current) onResize(resized(drag.current.width, event.clientX - drag.current.x));
      }}
      onPointerUp={(event) => {
        drag.current = null;
        event.currentTarget.releasePointerCapture(event.pointerId);
      }}
    />
  );
}

function ColumnMenu({
  column,
  index,
  x,
  y,
  sort,
  pinned,
  rows,
  onClose,
  onSort,
  onFilter,
  onPin,
  onResetWidth,
}: {
  column: ResultColumn;
  index: number;
  x: number;
  y: number;
  sort: "asc" | "desc" | null;
  pinned: boolean;
  rows: unknown[][];
  onClose(): void;
  onSort(dir: "asc" | "desc" | null): void;
  onFilter(): void;
  onPin(): void;
  onResetWidth(): void;
}) {
  const box = useRef<HTMLDivElement>(null);
  const stats = useMemo(() => columnStats(rows, index, column.data_type), [rows, index, column.data_type]);
  const sortable = !isNestedType(column.data_type);
  useEffect(() => {
    box.current?.querySelector<HTMLElement>("[role=menuitem]")?.focus();
    const away = (event: globalThis.MouseEvent) => {
      if (box.current && !box.current.contains(event.target as Node)) onClose();
    };
    document.addEventListener("mousedown", away);
    return () => document.removeEventListener("mousedown", away);
  }, [onClose]);
  const act = (action: () => void) => () => {
    action();
    onClose();
  };
  const fmt = formatCount;
  return (
    <div
      ref={box}
      className="rv-menu card"
      role="menu"
      aria-label={`Column ${column.name}`}
      style={{ left: Math.max(4, Math.min(x, window.innerWidth - 300)), top: y }}
      onKeyDown={(event) => {
        if (event.key === "Escape") onClose();
      }}
    >
      {sortable && (
        <>
          <button type="button" role="menuitem" onClick={act(() => onSort("asc"))} aria-checked={sort === "asc"}>
            Sort ascending
          </button>
          <button type="button" role="menuitem" onClick={act(() => onSort("desc"))}>
            Sort descending
          </button>
          {sort && (
            <button type="button" role="menuitem" onClick={act(() => onSort(null))}>
              Clear sort
            </button>
          )}
        </>
      )}
      <button type="button" role="menuitem" onClick={act(onFilter)}>
        Filter…
      </button>
      <button type="button" role="menuitem" onClick={act(onPin)}>
        {pinned ? "Unpin column" : "Pin column"}
      </button>
      <button type="button" role="menuitem" onClick={act(onResetWidth)}>
        Reset width
      </button>
      <div className="rv-stats" role="group" aria-label="Column stats on this page" data-testid="column-stats">
        <div className="muted">On this page ({countOf(stats.values, "row")})</div>
        <dl>
          <dt>NULL</dt>
          <dd>{fmt(stats.nulls)}</dd>
          <dt>Distinct</dt>
          <dd>{fmt(stats.distinct)}</dd>
          {sortable && (
            <>
              <dt>Min</dt>
              <dd title={stats.min ?? undefined}>{stats.min === null ? "—" : truncate(stats.min, 40).shown}</dd>
              <dt>Max</dt>
              <dd title={stats.max ?? undefined}>{stats.max === null ? "—" : truncate(stats.max, 40).shown}</dd>
            </>
          )}
        </dl>
      </div>
    </div>
  );
}

function GridCell({
  col,
  pos,
  value,
  width,
  left,
  numeric,
  selected,
}: {
  col: number;
  pos: number;
  value: unknown;
  width: number;
  left: number | undefined;
  numeric: boolean;
  selected: boolean;
}) {
  const text = cellText(value);
  const classes = `rv-cell${selected ? " selected" : ""}${left !== undefined ? " pinned" : ""}`;
  const style = { width, left };
  if (text === null)
    return (
      <div className={classes} role="gridcell" aria-selected={selected} data-col={col} data-pos={pos} style={style}>
        <span className="null">NULL</span>
      </div>
    );
  const { shown, cut } = truncate(text);
  return (
    <div
      className={`${classes}${numeric ? " num" : ""}${cut ? " cut" : ""}`}
      role="gridcell"
      aria-selected={selected}
      data-col={col}
      data-pos={pos}
      style={style}
      title={cut ? "Double-click or press Enter to see the whole value" : text.length > 8 ? text : undefined}
    >
      {shown}
    </div>
  );
}
