// /catalog: the catalogs the user may see; New catalog for those who may create one.
import type { Catalog, Page } from "../../api";
import { DataGrid } from "../../components/grid/DataGrid";
import { Link, navigate, pathOf, useTitle } from "../../router";
import { ErrorAlert, useCatalogQuery, useMayCreateCatalog } from "./common";

export function CatalogHome() {
  useTitle("Catalog");
  const catalogs = useCatalogQuery<Page<Catalog>>("/catalogs?page_size=200");
  const mayCreate = useMayCreateCatalog();
  return (
    <div className="cat-main-inner">
      <div className="cat-header">
        <h1>Catalogs</h1>
        <div className="spacer" />
        {mayCreate ? (
          <button type="button" className="primary" onClick={() => navigate("/catalog?new=catalog")}>
            New catalog
          </button>
        ) : null}
      </div>
      <ErrorAlert error={catalogs.error} />
      {catalogs.isPending ? <p className="muted">Loading catalogs…</p> : null}
      {catalogs.data && catalogs.data.items.length === 0 ? (
        <p className="muted">
          {mayCreate ? "No catalogs yet. Create one to get started." : "No catalogs you may see yet: an owner must grant you one."}
        </p>
      ) : null}
      {catalogs.data ? (
        <DataGrid
          rows={catalogs.data.items}
          rowKey={(catalog) => catalog.name}
          columns={[
            { header: "Name", cell: (catalog) => <Link to={pathOf("catalog", catalog.name)}>{catalog.name}</Link> },
            { header: "Owner", cell: (catalog) => catalog.owner },
            { header: "Comment", className: "cat-cell-comment", cell: (catalog) => catalog.comment },
          ]}
        />
      ) : null}
    </div>
  );
}
