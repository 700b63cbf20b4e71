// The Permissions tab of a table, view or function page, and the Permissions section of a
// catalog or database page (ADR 0011 §6), as Unity Catalog's Explorer shows them: the owner
// (and "Transfer ownership"), who has access (granted here, or inherited "from catalog c"),
// the user's own access, and — for those who may manage the object — a grant form, revoke
// buttons and the object's recent access from the audit log.
import { useEffect, useRef, useState } from "react";
import {
  type AuditEvent,
  type PrincipalType,
  type Privilege,
  type SecurableKind,
} from "../../../api";
import { DataGrid, PagedGrid } from "../../../components/grid/DataGrid";
import { formatTimestamp } from "../../../format";
import { usePagedQuery, usePatchPermissions, usePermissions } from "../../../data/queries";
import { Link, pathOf } from "../../../router";
import { describeEvent } from "../../admin/audit";
import { ConfirmDialog, ErrorAlert, usePatch } from "../common";
import {
  accessRows,
  directPrivileges,
  effectiveLines,
  fullCan,
  grantChange,
  grantable,
  inheritedLabel,
  joinWords,
  meaning,
  revokeChange,
  type AccessRow,
} from "../privileges";
import { PrincipalPicker, usePrincipalPicker } from "./PrincipalPicker";

/** The page of an object a grant is inherited from. */
function pageOf(kind: SecurableKind, identifier: string[]): string {
  if (kind === "catalog" || kind === "database") return pathOf("catalog", ...identifier);
  const [c, d, name] = identifier;
  return pathOf("catalog", c, d, kind, name);
}

export function PermissionsPanel({ base, kind }: { base: string; kind: SecurableKind }) {
  const permissions = usePermissions(base);
  const patch = usePatchPermissions(base);
  const [status, setStatus] = useState("");
  // A revoke waits for a confirmation: the grant it takes away, asked about in a dialog.
  const [revoking, setRevoking] = useState<{ row: AccessRow; privileges: Privilege[] } | null>(null);
  const [transferring, setTransferring] = useState(false);

  if (permissions.error && !permissions.data) return <ErrorAlert error={permissions.error} />;
  if (!permissions.data) return <p className="muted">Loading permissions…</p>;
  const body = permissions.data;
  const can = fullCan(body.can);
  const rows = accessRows(body.privilege_assignments);

  const revoke = (row: AccessRow, privileges: Privilege[]) => {
    setStatus("");
    setRevoking({ row, privileges });
  };
  // Confirmed: a refusal stays in the dialog (ConfirmDialog shows it), success closes it.
  const confirmRevoke = async () => {
    if (!revoking) return;
    const { row, privileges } = revoking;
    await patch.mutateAsync([revokeChange(row.type, row.principal, privileges)]);
    setRevoking(null);
    setStatus(`Revoked ${joinWords(privileges)} from ${row.type} ${row.principal}.`);
  };

  return (
    <div className="perm" data-testid="permissions">
      <div className="perm-owner">
        <h3>Owner</h3>
        <p>
          <span data-testid="permissions-owner">{body.owner ?? "nobody"}</span>
          {can.transfer_owner ? (
            <>
              {" "}
              <button type="button" className="small" onClick={() => setTransferring(true)}>
                Transfer ownership
              </button>
            </>
          ) : null}
        </p>
        <p className="muted perm-hint">
          The owner holds every privilege on this {kind}
          {kind === "catalog" || kind === "database" ? " and everything in it" : ""}.
        </p>
      </div>

      <h3>Your access</h3>
      <YourAccess effective={body.effective} kind={kind} />

      <h3>Who has access</h3>
      {!can.manage ? (
        <p className="muted perm-hint">Only your own grants and your teams' are listed: you may not manage this {kind}.</p>
      ) : null}
      {rows.length === 0 ? (
        <p className="muted" data-testid="no-grants">
          {can.manage
            ? `No grants: only the owners of this ${kind} and of what contains it, and admins, have access.`
            : `Neither you nor your teams hold a grant on this ${kind} or on what contains it.`}
        </p>
      ) : (
        <DataGrid
          rows={rows}
          className="perm-table"
          testId="who-has-access"
          rowKey={(row) => row.key}
          rowAttributes={(row) => ({ "data-testid": `grant-${row.type}-${row.principal}${row.from ? "-inherited" : ""}` })}
          columns={[
            {
              header: "Principal",
              cell: (row) => (
                <>
                  <span className="badge">{row.type}</span>{" "}
                  {row.type === "team" ? (
                    <Link to={pathOf("teams", row.principal)} className="mono">
                      {row.principal}
                    </Link>
                  ) : (
                    <span className="mono">{row.principal}</span>
                  )}
                </>
              ),
            },
            {
              header: "Privileges",
              cell: (row) => (
                <span className="perm-chips">
                  {row.privileges.map((privilege) => (
                    <span key={privilege} className="perm-chip" title={meaning(privilege, kind)}>
                      {privilege}
                      {can.manage && !row.from ? (
                        <button
                          type="button"
                          className="perm-revoke"
                          aria-label={`Revoke ${privilege} from ${row.type} ${row.principal}`}
                          title={`Revoke ${privilege}`}
                          disabled={patch.isPending}
                          onClick={() => revoke(row, [privilege])}
                        >
                          ×
                        </button>
                      ) : null}
                    </span>
                  ))}
                </span>
              ),
            },
            {
              header: "Granted",
              cell: (row) =>
                row.from ? (
                  <Link to={pageOf(row.from.kind, row.from.identifier)} className="muted">
                    {inheritedLabel(row.from)}
                  </Link>
                ) : (
                  <span className="perm-direct">
                    on this {kind}
                    {can.manage && row.privileges.length > 1 ? (
                      <button
                        type="button"
                        className="small link"
                        disabled={patch.isPending}
                        onClick={() => revoke(row, row.privileges)}
                      >
                        Revoke all
                      </button>
                    ) : null}
                  </span>
                ),
            },
          ]}
        />
      )}
      {revoking ? (
        <ConfirmDialog
          title={`Revoke ${joinWords(revoking.privileges)}?`}
          action="Revoke"
          busyLabel="Revoking…"
          onConfirm={confirmRevoke}
          onClose={() => setRevoking(null)}
        >
          <p>
            {revoking.row.type} <span className="mono">{revoking.row.principal}</span> loses{" "}
            {joinWords(revoking.privileges)} on this {kind} at once (their next statement is checked
            without it).
          </p>
        </ConfirmDialog>
      ) : null}
      {status ? (
        <p className="perm-status" role="status">
          {status}
        </p>
      ) : null}

      {can.manage ? (
        <GrantForm
          kind={kind}
          busy={patch.isPending}
          held={(type, name) => directPrivileges(body.privilege_assignments, type, name)}
          onGrant={async (type, name, chosen) => {
            const change = grantChange(body.privilege_assignments, type, name, chosen);
            if (!change) return;
            setStatus("");
            await patch.mutateAsync([change]);
            setStatus(`Granted ${joinWords(change.add)} to ${type} ${change.principal}.`);
          }}
        />
      ) : null}
      {can.manage ? <RecentAccess base={base} /> : null}
      {transferring ? (
        <TransferOwnerDialog base={base} kind={kind} owner={body.owner} onClose={() => setTransferring(false)} />
      ) : null}
    </div>
  );
}

function YourAccess({ effective, kind }: { effective: string[]; kind: SecurableKind }) {
  const lines = effectiveLines(effective, kind);
  if (lines.length === 0) return <p className="muted">You hold no privilege on this {kind}.</p>;
  return (
    <ul className="perm-yours" data-testid="your-access">
      {lines.map((line) => (
        <li key={line.privilege}>
          <strong>{line.privilege}</strong> <span className="muted">— {line.meaning}</span>
        </li>
      ))}
    </ul>
  );
}

function GrantForm({
  kind,
  busy,
  held,
  onGrant,
}: {
  kind: SecurableKind;
  busy: boolean;
  held: (type: PrincipalType, name: string) => Privilege[];
  onGrant: (type: PrincipalType, name: string, chosen: Privilege[]) => Promise<void>;
}) {
  const picker = usePrincipalPicker();
  const [chosen, setChosen] = useState<Set<Privilege>>(new Set());
  const [error, setError] = useState<unknown>(null);
  const principal = picker.resolved;
  const already = principal ? held(principal.type, principal.name) : [];
  const toAdd = [...chosen].filter((privilege) => !already.includes(privilege));

  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    if (!principal || toAdd.length === 0) return;
    setError(null);
    try {
      await onGrant(principal.type, principal.name, toAdd);
      picker.reset();
      setChosen(new Set());
    } catch (failure) {
      setError(failure);
    }
  };

  return (
    <form className="perm-grant" onSubmit={(event) => void submit(event)} aria-label="Grant privileges">
      <h3>Grant</h3>
      <PrincipalPicker picker={picker} label="Principal" />
      {picker.text.trim() && !principal ? (
        <p className="muted perm-hint">Choose a user or team from the list (or type team:name or user:name).</p>
      ) : null}
      <fieldset className="cat-checks">
        <legend>Privileges</legend>
        {grantable(kind).map((privilege) => (
          <label key={privilege} className="inline" title={meaning(privilege, kind)}>
            <input
              type="checkbox"
              checked={chosen.has(privilege) || already.includes(privilege)}
              disabled={already.includes(privilege)}
              onChange={(event) => {
                const next = new Set(chosen);
                if (event.target.checked) next.add(privilege);
                else next.delete(privilege);
                setChosen(next);
              }}
            />
            {privilege}
          </label>
        ))}
      </fieldset>
      {principal && already.length > 0 ? (
        <p className="muted perm-hint">
          {principal.type} {principal.name} already holds {joinWords(already)} here.
        </p>
      ) : null}
      <ErrorAlert error={error} />
      <div className="toolbar">
        <button type="submit" className="primary" disabled={busy || !principal || toAdd.length === 0}>
          {busy ? "Granting…" : "Grant"}
        </button>
      </div>
    </form>
  );
}

function RecentAccess({ base }: { base: string }) {
  const events = usePagedQuery<AuditEvent>(`${base}/access`, { pageSize: 20 });
  return (
    <>
      <h3>Recent access</h3>
      <PagedGrid
        list={events}
        loadingText="Loading recent access…"
        empty={<p className="muted">No recorded access yet.</p>}
        className="perm-table"
        testId="recent-access"
        moreStyle="link"
        rowKey={(event) => String(event.id)}
        columns={[
          { header: "When", className: "nowrap", cell: (event) => formatTimestamp(event.at) },
          { header: "Who", cell: (event) => event.actor ?? <span className="muted">system</span> },
          {
            header: "What",
            cell: (event) => (
              <>
                {describeEvent(event)}
                {event.job ? (
                  <>
                    {" "}
                    (<Link to={pathOf("jobs", event.job)}>job {event.job.slice(0, 8)}</Link>)
                  </>
                ) : null}
              </>
            ),
          },
        ]}
      />
    </>
  );
}

function TransferOwnerDialog({
  base,
  kind,
  owner,
  onClose,
}: {
  base: string;
  kind: SecurableKind;
  owner: string | null;
  onClose: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const picker = usePrincipalPicker("user");
  const save = usePatch<unknown>(base);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);
  const target = picker.resolved;

  const transfer = async () => {
    if (!target) return;
    setBusy(true);
    setError(null);
    try {
      await save({ owner: target.name });
      onClose();
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };

  return (
    <dialog
      ref={ref}
      className="cat-dialog"
      aria-labelledby="perm-owner-title"
      onCancel={(event) => {
        event.preventDefault();
        if (!busy) onClose();
      }}
    >
      <h2 id="perm-owner-title">Transfer ownership</h2>
      <p>
        The new owner holds every privilege on this {kind}
        {owner ? `; ${owner} keeps only what grants give them` : ""}.
        {kind === "view" ? " The view then reads its tables with the new owner's rights." : ""}
      </p>
      <PrincipalPicker picker={picker} label="New owner" />
      <ErrorAlert error={error} />
      <div className="toolbar cat-dialog-actions">
        <button
          type="button"
          className="primary"
          onClick={() => void transfer()}
          disabled={busy || !target || target.name === owner}
        >
          {busy ? "Transferring…" : "Transfer"}
        </button>
        <button type="button" onClick={onClose} disabled={busy}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}
