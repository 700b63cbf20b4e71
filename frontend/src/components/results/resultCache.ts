// Where the result view keeps the pages it fetched (GET /jobs/{id}/result), so that a page the
// server already sent (the first page in a statement's POST answer) is shown without a request.
import type { QueryClient, QueryKey } from "@tanstack/react-query";
import type { ResultColumn, ResultPage } from "../../api";
import { jobPath } from "../../data/jobs";

/** A page as the result view holds it; `key` says which page, sort and filters it answers. */
export interface LoadedPage {
  key: string;
  columns: ResultColumn[];
  rows: unknown[][];
  rowCount: number;
}

/** Which page (index, server sort, server filters) a loaded page answers. */
export const pageIdentity = (pageIndex: number, sort: string | null, filters: string[]): string =>
  JSON.stringify([pageIndex, sort, filters]);

export const resultPageKey = (jobId: string, pageIndex: number, sort: string | null, filters: string[]): QueryKey => [
  "jobs",
  jobPath(jobId),
  "result",
  pageIndex,
  sort,
  filters,
];

/** Keep `page` as the job's first page, unsorted and unfiltered (what the view shows first). */
export function seedFirstPage(client: QueryClient, jobId: string, page: ResultPage): void {
  const loaded: LoadedPage = {
    key: pageIdentity(0, null, []),
    columns: page.columns,
    rows: page.rows,
    rowCount: page.row_count,
  };
  client.setQueryData(resultPageKey(jobId, 0, null, []), loaded);
}
