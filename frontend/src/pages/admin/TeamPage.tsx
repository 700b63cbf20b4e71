// /teams/<t>: one team's members. Admins add members (user completion) and remove them;
// members see the list read-only. The implicit team everyone has no member list.
import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { del, enc, put, qs, type Team, type TeamMember, type User } from "../../api";
import { apiQuery, usePagedQuery, useWrite } from "../../data/queries";
import { Link, navigate, useTitle } from "../../router";
import { PagedGrid } from "../../components/grid/DataGrid";
import { ConfirmDialog, ErrorAlert } from "../catalog/common";
import { PrincipalPicker, usePrincipalPicker } from "../catalog/object/PrincipalPicker";
import "./admin.css";

export function TeamPage({ name, user }: { name: string; user: User }) {
  useTitle(`Team ${name}`);
  const base = `/teams/${enc(name)}`;
  const team = useQuery(apiQuery<Team>(base));
  const implicit = team.data?.implicit ?? false;
  const members = usePagedQuery<TeamMember>(`${base}/members`, { pageSize: 200, enabled: !!team.data && !implicit });
  const admin = user.is_admin;
  const picker = usePrincipalPicker("user");
  const [status, setStatus] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [removing, setRemoving] = useState<string | null>(null);
  const [deleting, setDeleting] = useState(false);
  const add = useWrite((username: string) => put(`${base}/members/${enc(username)}`), ["teams"]);
  const remove = useWrite((username: string) => del(`${base}/members/${enc(username)}`), ["teams"]).mutateAsync;
  const drop = useWrite(() => del(base), ["teams"]).mutateAsync;

  if (team.error && !team.data)
    return (
      <div className="page admin-page">
        <p>
          <Link to="/teams">Teams</Link>
        </p>
        <ErrorAlert error={team.error} />
      </div>
    );
  if (!team.data) return <p className="page admin-page muted">Loading team…</p>;

  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    const who = picker.resolved;
    if (!who) return;
    setError(null);
    setStatus("");
    try {
      await add.mutateAsync(who.name);
      setStatus(`Added ${who.name} to ${team.data.name}.`);
      picker.reset();
    } catch (failure) {
      setError(failure);
    }
  };

  return (
    <div className="page admin-page">
      <nav aria-label="Breadcrumb" className="cat-crumbs">
        <Link to="/teams">Teams</Link>
      </nav>
      <div className="admin-head">
        <h1>
          <span className="badge info">team</span> <span className="mono">{team.data.name}</span>
        </h1>
        <span className="muted">
          {implicit ? "every user is a member" : `${team.data.members} member${team.data.members === 1 ? "" : "s"}`}
        </span>
        <div className="spacer" />
        {admin ? <Link to={`/audit${qs({ principal: `team:${team.data.name}` })}`}>Audit events</Link> : null}
        {admin && !implicit ? (
          <button type="button" className="danger" onClick={() => setDeleting(true)}>
            Delete team
          </button>
        ) : null}
      </div>
      {implicit ? (
        <p className="muted">
          Every user belongs to {team.data.name}; nobody is added or removed. A grant to it is a grant to every signed-in
          user.
        </p>
      ) : null}
      {admin && !implicit ? (
        <form className="admin-form card" onSubmit={(event) => void submit(event)} aria-label="Add member">
          <PrincipalPicker picker={picker} label="User" />
          <button type="submit" className="primary" disabled={add.isPending || !picker.resolved}>
            {add.isPending ? "Adding…" : "Add member"}
          </button>
        </form>
      ) : null}
      <ErrorAlert error={error} />
      {status ? (
        <p className="perm-status" role="status">
          {status}
        </p>
      ) : null}
      {!implicit ? (
        <>
          <h2>Members</h2>
          <PagedGrid
            list={members}
            loadingText="Loading members…"
            empty={<p className="muted">No members yet.</p>}
            className="admin-table"
            testId="members"
            rowKey={(member) => member.username}
            rowAttributes={(member) => ({ "data-testid": `member-${member.username}` })}
            columns={[
              { header: "User", className: "mono", cell: (member) => member.username },
              ...(admin
                ? [
                    {
                      header: "Actions",
                      hideHeader: true,
                      className: "admin-actions",
                      cell: ({ username: member }: TeamMember) => (
                        <button
                          type="button"
                          className="small danger"
                          aria-label={`Remove ${member}`}
                          onClick={() => setRemoving(member)}
                        >
                          Remove
                        </button>
                      ),
                    },
                  ]
                : []),
            ]}
          />
        </>
      ) : null}
      {removing ? (
        <ConfirmDialog
          title={`Remove ${removing} from ${team.data.name}?`}
          action="Remove member"
          onClose={() => setRemoving(null)}
          onConfirm={async () => {
            await remove(removing);
            setStatus(`Removed ${removing} from ${team.data.name}.`);
            setRemoving(null);
          }}
        >
          <p>From their next statement on, {removing} no longer holds what grants to the team give.</p>
        </ConfirmDialog>
      ) : null}
      {deleting ? (
        <ConfirmDialog
          title={`Delete team ${team.data.name}?`}
          action="Delete team"
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            await drop(undefined);
            navigate("/teams");
          }}
        >
          <p>Its members lose what grants to the team gave them, and the grants go with it. This cannot be undone.</p>
        </ConfirmDialog>
      ) : null}
    </div>
  );
}
