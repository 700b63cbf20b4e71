// Create a view: name, comment and query, shown as the CREATE VIEW it runs. The statement runs
// in the catalog pages' session like DDL typed in the editor, so Spark derives (and checks) the
// view's schema before it is stored.
import { useMemo, useState } from "react";
import { pathOf } from "../../../router";
import { ErrorAlert } from "../common";
import { sessionIn } from "../sql";
import { viewDdl } from "../ddl";
import { useDdlSubmit } from "./runDdl";
import { FormShell } from "./shared";

export function NewViewForm({ catalog, database }: { catalog: string; database: string }) {
  const [name, setName] = useState("");
  const [comment, setComment] = useState("");
  const [query, setQuery] = useState("");
  // Unqualified names in its body resolve in the database it is created in.
  const sessions = useMemo(() => sessionIn(catalog, database), [catalog, database]);
  const { busy, error, submit: submitDdl } = useDdlSubmit(sessions);
  const sql = viewDdl({ catalog, database, name, comment, query });

  const submit = () => submitDdl(sql, pathOf("catalog", catalog, database, "view", name.trim()));

  return (
    <FormShell
      title={`New view in ${catalog}.${database}`}
      crumbs={[catalog, database]}
      onSubmit={() => void submit()}
      busy={busy}
      submitLabel="Create view"
      cancelTo={pathOf("catalog", catalog, database)}
    >
      <label>
        View name
        <input value={name} onChange={(ev) => setName(ev.target.value)} autoFocus spellCheck={false} />
      </label>
      <label>
        Comment
        <textarea value={comment} rows={2} onChange={(ev) => setComment(ev.target.value)} />
      </label>
      <label>
        Query
        <textarea
          className="mono"
          value={query}
          rows={8}
          spellCheck={false}
          placeholder="SELECT … FROM …"
          onChange={(ev) => setQuery(ev.target.value)}
        />
      </label>
      <h2>Statement</h2>
      <pre className="cat-ddl" data-testid="ddl-preview">
        {sql}
      </pre>
      <ErrorAlert error={error} />
    </FormShell>
  );
}
