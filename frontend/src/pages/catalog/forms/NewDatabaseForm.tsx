// Create a database in a catalog (name, comment).
import { useState } from "react";
import { enc, post, type Database } from "../../../api";
import { useWrite } from "../../../data/queries";
import { pathOf } from "../../../router";
import { ErrorAlert, errorMessage } from "../common";
import { FieldError, FormShell, invalid, splitError, useCreateSubmit } from "./shared";

export function NewDatabaseForm({ catalog }: { catalog: string }) {
  const [name, setName] = useState("");
  const [comment, setComment] = useState("");
  const create = useWrite(
    (body: unknown) => post<Database>(`/catalogs/${enc(catalog)}/databases`, body),
    ["catalogs"],
  ).mutateAsync;
  const { busy, error, submit } = useCreateSubmit(async () => {
    const created = await create({ name: name.trim(), comment });
    return pathOf("catalog", created.catalog, created.name);
  });
  const split = splitError(error, ["name", "comment"]);
  const msg = (field: string) => (split.field === field ? errorMessage(error) : undefined);

  return (
    <FormShell
      title={`New database in ${catalog}`}
      crumbs={[catalog]}
      onSubmit={() => void submit()}
      busy={busy}
      submitLabel="Create database"
      cancelTo={pathOf("catalog", catalog)}
    >
      <label>
        Name
        <input value={name} onChange={(ev) => setName(ev.target.value)} autoFocus {...invalid("err-name", msg("name"))} />
      </label>
      <FieldError id="err-name" message={msg("name")} />
      <label>
        Comment
        <textarea value={comment} rows={2} onChange={(ev) => setComment(ev.target.value)} />
      </label>
      <FieldError id="err-comment" message={msg("comment")} />
      <ErrorAlert error={split.general} />
    </FormShell>
  );
}

