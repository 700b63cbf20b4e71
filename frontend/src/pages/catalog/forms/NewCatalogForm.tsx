// Create a catalog (name, comment, default database).
import { useState } from "react";
import { post, type Catalog } from "../../../api";
import { useWrite } from "../../../data/queries";
import { pathOf } from "../../../router";
import { ErrorAlert, errorMessage } from "../common";
import { FieldError, FormShell, invalid, splitError, useCreateSubmit } from "./shared";

export function NewCatalogForm() {
  const [name, setName] = useState("");
  const [comment, setComment] = useState("");
  const [defaultDatabase, setDefaultDatabase] = useState("default");
  const create = useWrite((body: unknown) => post<Catalog>("/catalogs", body), ["catalogs"]).mutateAsync;
  const { busy, error, submit } = useCreateSubmit(async () => {
    const created = await create({
      name: name.trim(),
      comment,
      default_database: defaultDatabase.trim() || "default",
    });
    return pathOf("catalog", created.name);
  });
  const split = splitError(error, ["name", "comment", "default_database"]);
  const msg = (field: string) => (split.field === field ? errorMessage(error) : undefined);

  return (
    <FormShell
      title="New catalog"
      crumbs={[]}
      onSubmit={() => void submit()}
      busy={busy}
      submitLabel="Create catalog"
      cancelTo="/catalog"
    >
      <label>
        Name
        <input value={name} onChange={(ev) => setName(ev.target.value)} autoFocus {...invalid("err-name", msg("name"))} />
      </label>
      <FieldError id="err-name" message={msg("name")} />
      <label>
        Comment
        <textarea value={comment} rows={2} onChange={(ev) => setComment(ev.target.value)} {...invalid("err-comment", msg("comment"))} />
      </label>
      <FieldError id="err-comment" message={msg("comment")} />
      <label>
        Default database
        <input
          value={defaultDatabase}
          onChange={(ev) => setDefaultDatabase(ev.target.value)}
          {...invalid("err-default", msg("default_database"))}
        />
      </label>
      <FieldError id="err-default" message={msg("default_database")} />
      <ErrorAlert error={split.general} />
    </FormShell>
  );
}

