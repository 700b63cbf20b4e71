// What a database holds (first page of tables, views and functions), for its page and for
// the summary shown before a catalog is dropped.
import { enc, get, type FunctionObject, type Page, type Table } from "../../api";

export interface Counted {
  tables: Table[];
  views: Table[];
  functions: FunctionObject[];
  more: boolean;
}

export async function databaseChildren(catalog: string, database: string, signal?: AbortSignal): Promise<Counted> {
  const base = `/catalogs/${enc(catalog)}/databases/${enc(database)}`;
  const [tables, views, functions] = await Promise.all([
    get<Page<Table>>(`${base}/tables?page_size=200`, { signal }),
    get<Page<Table>>(`${base}/views?page_size=200`, { signal }),
    get<Page<FunctionObject>>(`${base}/functions?page_size=200`, { signal }),
  ]);
  return {
    tables: tables.items,
    views: views.items,
    functions: functions.items,
    more: Boolean(tables.next_page_token || views.next_page_token || functions.next_page_token),
  };
}
