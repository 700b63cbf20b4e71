// A result column's name in its header, with the sort mark beside it: the name is cut with an
// ellipsis when the column is narrow, the mark never is (it is not part of the cut text).
import type { SortDir } from "./table";

export function HeaderName({ name, sorted }: { name: string; sorted: SortDir | null }) {
  return (
    <span className="rv-nameline">
      <span className="rv-colname">{name}</span>
      {sorted ? (
        <span className={`rv-sortmark sorted-${sorted}`} aria-hidden="true" data-testid="sort-mark">
          {sorted === "asc" ? "▲" : "▼"}
        </span>
      ) : null}
    </span>
  );
}
