// Create a function: a SQL function (parameters, return type, the expression after RETURN) or
// a Python one (`package.module.function`), shown as the CREATE FUNCTION it runs in the catalog
// pages' session — the same planner and checks as DDL typed in the editor.
import { useMemo, useState } from "react";
import { DataGrid } from "../../../components/grid/DataGrid";
import { pathOf } from "../../../router";
import { ErrorAlert } from "../common";
import { sessionIn } from "../sql";
import { functionDdl, type FunctionDraft, type ParameterRow } from "../ddl";
import { useDdlSubmit } from "./runDdl";
import { FormShell } from "./shared";

export function NewFunctionForm({ catalog, database }: { catalog: string; database: string }) {
  const [name, setName] = useState("");
  const [comment, setComment] = useState("");
  const [language, setLanguage] = useState<FunctionDraft["language"]>("sql");
  const [parameters, setParameters] = useState<ParameterRow[]>([{ name: "", type: "" }]);
  const [returns, setReturns] = useState("");
  const [body, setBody] = useState("");
  // Unqualified names in its body resolve in the database it is created in.
  const sessions = useMemo(() => sessionIn(catalog, database), [catalog, database]);
  const { busy, error, submit: submitDdl } = useDdlSubmit(sessions);
  const sql = functionDdl({ catalog, database, name, comment, language, parameters, returns, body });
  const setParameter = (index: number, patch: Partial<ParameterRow>) =>
    setParameters((rows) => rows.map((row, i) => (i === index ? { ...row, ...patch } : row)));

  const submit = () => submitDdl(sql, pathOf("catalog", catalog, database, "function", name.trim()));

  return (
    <FormShell
      title={`New function in ${catalog}.${database}`}
      crumbs={[catalog, database]}
      onSubmit={() => void submit()}
      busy={busy}
      submitLabel="Create function"
      cancelTo={pathOf("catalog", catalog, database)}
    >
      <label>
        Function name
        <input value={name} onChange={(ev) => setName(ev.target.value)} autoFocus spellCheck={false} />
      </label>
      <label>
        Language
        <select value={language} onChange={(ev) => setLanguage(ev.target.value as FunctionDraft["language"])}>
          <option value="sql">SQL</option>
          <option value="python">Python</option>
        </select>
      </label>
      {language === "sql" ? (
        <>
          <h2>Parameters</h2>
          <DataGrid
            showEmpty
            rows={parameters}
            className="cat-columns"
            rowKey={(_row, index) => String(index)}
            columns={[
              {
                header: "Name",
                cell: (row, index) => (
                  <input
                    aria-label={`Parameter ${index + 1} name`}
                    value={row.name}
                    spellCheck={false}
                    onChange={(ev) => setParameter(index, { name: ev.target.value })}
                  />
                ),
              },
              {
                header: "Type",
                cell: (row, index) => (
                  <input
                    aria-label={`Parameter ${index + 1} type`}
                    value={row.type}
                    spellCheck={false}
                    placeholder="INT"
                    onChange={(ev) => setParameter(index, { type: ev.target.value })}
                  />
                ),
              },
              {
                header: "Actions",
                hideHeader: true,
                cell: (_row, index) => (
                  <button
                    type="button"
                    className="small"
                    onClick={() => setParameters((rows) => rows.filter((_, i) => i !== index))}
                  >
                    Remove
                  </button>
                ),
              },
            ]}
          />
          <button type="button" className="small" onClick={() => setParameters((rows) => [...rows, { name: "", type: "" }])}>
            Add parameter
          </button>
          <label>
            Returns
            <input value={returns} spellCheck={false} placeholder="DOUBLE" onChange={(ev) => setReturns(ev.target.value)} />
          </label>
          <label>
            Body (the expression after RETURN)
            <textarea className="mono" value={body} rows={4} spellCheck={false} onChange={(ev) => setBody(ev.target.value)} />
          </label>
          <label>
            Comment
            <textarea value={comment} rows={2} onChange={(ev) => setComment(ev.target.value)} />
          </label>
        </>
      ) : (
        <label>
          Python function (package.module.function)
          <input value={body} spellCheck={false} placeholder="tessera_udfs.text.slugify" onChange={(ev) => setBody(ev.target.value)} />
        </label>
      )}
      <h2>Statement</h2>
      <pre className="cat-ddl" data-testid="ddl-preview">
        {sql}
      </pre>
      <ErrorAlert error={error} />
    </FormShell>
  );
}
