// SQL DDL text written by the catalog's create forms (views, functions). The forms run it as a
// statement in the catalog pages' session, so it goes through the same planner, guard and
// Spark analysis as DDL typed in the editor. Names are quoted identifiers and the comment a
// quoted string; the query and body are the user's SQL, as they would type them.
import { sqlPath } from "../../api";

/** A Spark SQL string literal: backslashes and single quotes escaped. */
export function sqlString(text: string): string {
  return "'" + text.replaceAll("\\", "\\\\").replaceAll("'", "\\'") + "'";
}

function withoutTrailingSemicolon(sql: string): string {
  return sql.trim().replace(/;\s*$/, "").trimEnd();
}

export interface ViewDraft {
  catalog: string;
  database: string;
  name: string;
  comment: string;
  query: string;
}

export function viewDdl(draft: ViewDraft): string {
  const comment = draft.comment.trim() ? `\nCOMMENT ${sqlString(draft.comment)}` : "";
  return `CREATE VIEW ${sqlPath([draft.catalog, draft.database, draft.name.trim()])}${comment}\nAS ${withoutTrailingSemicolon(draft.query)}`;
}

export interface ParameterRow {
  name: string;
  type: string;
}

export interface FunctionDraft {
  catalog: string;
  database: string;
  name: string;
  comment: string;
  language: "sql" | "python";
  /** SQL: the parameters and return type; Python: unused (the worker reads the function). */
  parameters: ParameterRow[];
  returns: string;
  /** SQL: the expression after RETURN; Python: `package.module.function`. */
  body: string;
}

export function functionDdl(draft: FunctionDraft): string {
  const path = sqlPath([draft.catalog, draft.database, draft.name.trim()]);
  if (draft.language === "python")
    return `CREATE FUNCTION ${path} AS ${sqlString(draft.body.trim())} LANGUAGE PYTHON`;
  const params = draft.parameters
    .filter((p) => p.name.trim() || p.type.trim())
    .map((p) => `${sqlPath([p.name.trim()])} ${p.type.trim()}`)
    .join(", ");
  const comment = draft.comment.trim() ? `\nCOMMENT ${sqlString(draft.comment)}` : "";
  return `CREATE FUNCTION ${path}(${params})\nRETURNS ${draft.returns.trim()}${comment}\nRETURN ${withoutTrailingSemicolon(draft.body)}`;
}
