// The one data grid of the table-like screens (lists of jobs, teams, tokens, catalog objects,
// grants, versions, stages, …): a `<table className="grid">` built from column definitions,
// with the "Load more" of a paged list under it. The result grid of a job is ResultGrid.
import type { ReactNode } from "react";
import { ErrorAlert } from "../ErrorAlert";

export interface GridHeader {
  /** The header cell's text (its accessible name); "" for a column without one. */
  header: string;
  /** The header is for screen readers only (e.g. an actions column). */
  hideHeader?: boolean;
  headerClassName?: string;
  headerTitle?: string;
}

export interface GridColumn<T> extends GridHeader {
  cell(row: T, index: number): ReactNode;
  /** Classes of this column's cells (e.g. "nowrap"). */
  className?: string;
  /** A tooltip for a cell. */
  title?(row: T): string | undefined;
  /** The `data-testid` of this column's cells. */
  testId?: string;
}

/** The attributes a grid row may carry (tests and styles find rows by them). */
export type RowAttributes = { className?: string } & Record<`data-${string}`, string | undefined>;

/** A paged list's "Load more": shown while `next`; `loading` while a page is on its way. */
export interface Paging {
  next: boolean;
  loading: boolean;
  onMore(): void;
}

interface GridBase<T> {
  /** The rows; nothing is drawn for none (the page says why: loading, empty, an error). */
  rows: readonly T[];
  /** Classes after "grid" (e.g. "admin-table"). */
  className?: string;
  testId?: string;
  rowAttributes?(row: T): RowAttributes;
  more?: Paging;
  /** "link": the small link-style "Load more" of the panels inside a page. */
  moreStyle?: "button" | "link";
  /** No header row: a key/value list whose cells say what they are. */
  headless?: boolean;
  /** Draw the header with no rows too (an editable table the user adds rows to). */
  showEmpty?: boolean;
}

/** Cells from column definitions, or (for a row editor that owns its `<tr>`, e.g. its
 * validation state) headers and a row component. */
export type DataGridProps<T> = GridBase<T> &
  (
    | { columns: readonly GridColumn<T>[]; rowKey(row: T, index: number): string; renderRow?: undefined }
    | { columns: readonly GridHeader[]; renderRow(row: T, index: number): ReactNode }
  );

export function DataGrid<T>(props: DataGridProps<T>) {
  const { rows, columns, className, testId, more, moreStyle, headless, showEmpty } = props;
  return (
    <>
      {rows.length > 0 || showEmpty ? (
        <table className={className ? `grid ${className}` : "grid"} data-testid={testId}>
          {headless ? null : (
            <thead>
              <tr>
                {columns.map((column, index) => (
                  <th key={index} scope="col" className={column.headerClassName} title={column.headerTitle}>
                    {column.hideHeader ? <span className="visually-hidden">{column.header}</span> : column.header}
                  </th>
                ))}
              </tr>
            </thead>
          )}
          <tbody>{props.renderRow ? rows.map(props.renderRow) : <Rows {...props} />}</tbody>
        </table>
      ) : null}
      {more ? <LoadMore {...more} style={moreStyle} /> : null}
    </>
  );
}

function Rows<T>({
  rows,
  columns,
  rowKey,
  rowAttributes,
}: Pick<GridBase<T>, "rows" | "rowAttributes"> & { columns: readonly GridColumn<T>[]; rowKey(row: T, index: number): string }) {
  return rows.map((row, rowIndex) => (
    <tr key={rowKey(row, rowIndex)} {...rowAttributes?.(row)}>
      {columns.map((column, index) => (
        <td key={index} className={column.className} title={column.title?.(row)} data-testid={column.testId}>
          {column.cell(row, rowIndex)}
        </td>
      ))}
    </tr>
  ));
}

/** The "Load more" button of a paged list (nothing once the last page is loaded). */
export function LoadMore({ next, loading, onMore, style = "button" }: Paging & { style?: "button" | "link" }) {
  if (!next) return null;
  const button = (
    <button type="button" className={style === "link" ? "link small" : undefined} onClick={onMore} disabled={loading}>
      {loading ? "Loading…" : "Load more"}
    </button>
  );
  return style === "link" ? button : <div className="load-more">{button}</div>;
}

/** A paged list as usePagedQuery answers it. */
export interface PagedList<T> {
  items: T[];
  next: boolean;
  loading: boolean;
  loaded: boolean;
  error: unknown;
  loadMore(): void;
}

/** A paged list's grid with what surrounds it on every list screen: its error, "Loading…"
 * until the first page is there, `empty` when there is nothing, and "Load more". */
export function PagedGrid<T>({
  list,
  loadingText,
  empty,
  ...grid
}: Omit<GridBase<T>, "rows" | "more"> & {
  columns: readonly GridColumn<T>[];
  rowKey(row: T, index: number): string;
  list: PagedList<T>;
  loadingText: string;
  empty: ReactNode;
}) {
  return (
    <>
      <ErrorAlert error={list.error} />
      {!list.loaded && !list.error ? <p className="muted">{loadingText}</p> : null}
      {list.loaded && list.items.length === 0 ? empty : null}
      <DataGrid {...grid} rows={list.items} more={{ next: list.next, loading: list.loading, onMore: list.loadMore }} />
    </>
  );
}
