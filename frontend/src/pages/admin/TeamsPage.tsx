// /teams: admins list, create and delete teams; everyone else sees their own teams (and the
// implicit team everyone) read-only. A team is what grants are given to (ADR 0011 §4.4).
import { useState } from "react";
import { del, enc, post, type Team, type User } from "../../api";
import { useTeams, useWrite } from "../../data/queries";
import { Link, pathOf, useTitle } from "../../router";
import { PagedGrid } from "../../components/grid/DataGrid";
import { ConfirmDialog, ErrorAlert } from "../catalog/common";
import "./admin.css";

function membersText(team: Team): string {
  if (team.implicit) return "every user";
  return team.members === 1 ? "1 member" : `${team.members} members`;
}

export function TeamsPage({ user }: { user: User }) {
  useTitle("Teams");
  const teams = useTeams();
  const admin = user.is_admin;
  const [name, setName] = useState("");
  const [createError, setCreateError] = useState<unknown>(null);
  const [deleting, setDeleting] = useState<Team | null>(null);
  const create = useWrite((team: string) => post<Team>("/teams", { name: team }), ["teams"]);
  const remove = useWrite((team: string) => del(`/teams/${enc(team)}`), ["teams"]).mutateAsync;

  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    if (!name.trim()) return;
    setCreateError(null);
    try {
      await create.mutateAsync(name.trim());
      setName("");
    } catch (failure) {
      setCreateError(failure);
    }
  };

  return (
    <div className="page admin-page">
      <div className="admin-head">
        <h1>{admin ? "Teams" : "Your teams"}</h1>
        {!admin ? <span className="muted">Only admins create teams and change who is in them.</span> : null}
      </div>
      {admin ? (
        <form className="admin-form card" onSubmit={(event) => void submit(event)} aria-label="New team">
          <label>
            Team name
            <input value={name} onChange={(event) => setName(event.target.value)} autoComplete="off" spellCheck={false} />
          </label>
          <button type="submit" className="primary" disabled={create.isPending || !name.trim()}>
            {create.isPending ? "Creating…" : "Create team"}
          </button>
        </form>
      ) : null}
      <ErrorAlert error={createError} />
      <PagedGrid
        list={teams}
        loadingText="Loading teams…"
        empty={<p className="muted">{admin ? "No teams yet." : "You are in no team."}</p>}
        className="admin-table"
        testId="teams"
        rowKey={(team) => team.name}
        rowAttributes={(team) => ({ "data-testid": `team-${team.name}` })}
        columns={[
          {
            header: "Team",
            cell: (team) => (
              <>
                <Link to={pathOf("teams", team.name)} className="mono">
                  {team.name}
                </Link>
                {team.implicit ? <span className="badge"> implicit</span> : null}
              </>
            ),
          },
          { header: "Members", cell: membersText },
          ...(admin
            ? [
                {
                  header: "Actions",
                  hideHeader: true,
                  className: "admin-actions",
                  cell: (team: Team) =>
                    !team.implicit ? (
                      <button
                        type="button"
                        className="small danger"
                        aria-label={`Delete team ${team.name}`}
                        onClick={() => setDeleting(team)}
                      >
                        Delete
                      </button>
                    ) : null,
                },
              ]
            : []),
        ]}
      />
      {deleting ? (
        <ConfirmDialog
          title={`Delete team ${deleting.name}?`}
          action="Delete team"
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await remove(deleting.name);
            setDeleting(null);
          }}
        >
          <p>
            Its {membersText(deleting)} lose what grants to the team gave them, and the grants go with it. This cannot be
            undone.
          </p>
        </ConfirmDialog>
      ) : null}
    </div>
  );
}
