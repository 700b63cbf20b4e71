// A file dropped on a database in the tree, waiting for that database's page (which the drop
// opens) to show the upload dialog for it.
import { useCallback, useSyncExternalStore } from "react";

interface Pending {
  catalog: string;
  database: string;
  file: File;
}

let pending: Pending | null = null;
const listeners = new Set<() => void>();

export function offerFile(catalog: string, database: string, file: File): void {
  pending = { catalog, database, file };
  listeners.forEach((listener) => listener());
}

const subscribe = (listener: () => void) => {
  listeners.add(listener);
  return () => listeners.delete(listener);
};

/** The file dropped for `catalog`.`database` (null when none), and a way to take it. */
export function usePendingFile(catalog: string, database: string): [File | null, () => void] {
  const current = useSyncExternalStore(subscribe, () => pending);
  const file = current && current.catalog === catalog && current.database === database ? current.file : null;
  const take = useCallback(() => {
    pending = null;
    listeners.forEach((listener) => listener());
  }, []);
  return [file, take];
}

/** Whether a drag carries files (not text or a link dragged from the page). */
export const carriesFiles = (event: { dataTransfer: DataTransfer | null }): boolean =>
  Boolean(event.dataTransfer && Array.from(event.dataTransfer.types).includes("Files"));
