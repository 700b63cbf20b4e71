// The catalog browser: a tree on the left, the page of the selected catalog, database,
// table, view or function (or a create form) on the right. URLs:
// /catalog, /catalog/<c>, /catalog/<c>/<d>, /catalog/<c>/<d>/(table|view|function)/<name>,
// /catalog?new=catalog, /catalog/<c>?new=database, /catalog/<c>/<d>?new=table|view|function: the create
// forms live in the query string, so that no name (a catalog called "new-catalog") is taken.
import type { ReactNode } from "react";
import { Link, useLocation, useSegments } from "../../router";
import { CatalogTree, type ObjectKind, type Selection } from "./Tree";
import { NewCatalogForm } from "./forms/NewCatalogForm";
import { NewDatabaseForm } from "./forms/NewDatabaseForm";
import { NewFunctionForm } from "./forms/NewFunctionForm";
import { NewTableForm } from "./forms/NewTableForm";
import { NewViewForm } from "./forms/NewViewForm";
import { CatalogHome } from "./CatalogHome";
import { CatalogView } from "./CatalogView";
import { DatabaseView } from "./DatabaseView";
import { FunctionPage } from "./FunctionPage";
import { TablePage } from "./TablePage";
import { ViewPage } from "./ViewPage";
import "./catalog.css";

const KINDS: ObjectKind[] = ["table", "view", "function"];

export function CatalogPage() {
  const segments = useSegments().slice(1);
  const [c, d, kind, name] = segments;
  const creating = useLocation().search.get("new");
  const selection: Selection = {};
  let main: ReactNode;

  if (segments.length === 0 && creating === "catalog") {
    main = <NewCatalogForm />;
  } else if (segments.length === 0) {
    main = <CatalogHome />;
  } else if (segments.length === 1 && creating === "database") {
    selection.catalog = c;
    main = <NewDatabaseForm catalog={c} />;
  } else if (segments.length === 1) {
    selection.catalog = c;
    main = <CatalogView key={c} catalog={c} />;
  } else if (segments.length === 2 && creating === "table") {
    Object.assign(selection, { catalog: c, database: d });
    main = <NewTableForm catalog={c} database={d} />;
  } else if (segments.length === 2 && (creating === "view" || creating === "function")) {
    Object.assign(selection, { catalog: c, database: d });
    main =
      creating === "view" ? <NewViewForm catalog={c} database={d} /> : <NewFunctionForm catalog={c} database={d} />;
  } else if (segments.length === 2) {
    Object.assign(selection, { catalog: c, database: d });
    main = <DatabaseView key={`${c}/${d}`} catalog={c} database={d} />;
  } else if (segments.length === 4 && KINDS.includes(kind as ObjectKind)) {
    Object.assign(selection, { catalog: c, database: d, kind: kind as ObjectKind, name });
    const props = { catalog: c, database: d, name };
    const key = segments.join("/");
    main =
      kind === "table" ? (
        <TablePage key={key} {...props} />
      ) : kind === "view" ? (
        <ViewPage key={key} {...props} />
      ) : (
        <FunctionPage key={key} {...props} />
      );
  } else {
    main = (
      <div className="cat-main-inner">
        <h1>Page not found</h1>
        <p>
          Nothing lives at this address. <Link to="/catalog">Back to the catalogs</Link>.
        </p>
      </div>
    );
  }

  return (
    <div className="cat-layout">
      <CatalogTree selection={selection} />
      <section className="cat-main" aria-label="Catalog object">
        {main}
      </section>
    </div>
  );
}
