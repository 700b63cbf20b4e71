// /tokens: the signed-in user's API tokens for scripts and the Python client. A new token's
// key is shown once, right after it is made (the server keeps only its hash); revoking one
// makes every request with it fail at once.
import { useState } from "react";
import { del, post, type ApiToken, type IssuedToken } from "../../api";
import { copyText } from "../../components/results/clipboard";
import { formatTimestamp } from "../../format";
import { useTokens, useWrite } from "../../data/queries";
import { useTitle } from "../../router";
import { PagedGrid } from "../../components/grid/DataGrid";
import { ConfirmDialog, ErrorAlert } from "../catalog/common";
import "../admin/admin.css";

/** Lifetimes offered for a new token; "" leaves it to the server (its maximum, or never). */
const LIFETIMES: { label: string; seconds: number | null }[] = [
  { label: "Server default", seconds: null },
  { label: "1 day", seconds: 86_400 },
  { label: "7 days", seconds: 7 * 86_400 },
  { label: "30 days", seconds: 30 * 86_400 },
  { label: "90 days", seconds: 90 * 86_400 },
  { label: "1 year", seconds: 365 * 86_400 },
];

function expiresText(token: ApiToken): string {
  if (!token.expires) return "never";
  const text = formatTimestamp(token.expires);
  return new Date(token.expires).getTime() <= Date.now() ? `${text} (expired)` : text;
}

function NewKey({ issued, onDone }: { issued: IssuedToken; onDone: () => void }) {
  const [copied, setCopied] = useState<"no" | "yes" | "failed">("no");
  return (
    <div className="card token-key" role="status" aria-label="New token" data-testid="new-token">
      <p>
        <strong>Token “{issued.name || "unnamed"}” was made.</strong> Copy its key now: it will not be shown again.
      </p>
      <div className="token-key-row">
        <input
          readOnly
          className="mono"
          value={issued.token}
          aria-label="Token key"
          data-testid="new-token-key"
          onFocus={(event) => event.target.select()}
        />
        <button
          type="button"
          onClick={() =>
            void copyText(issued.token).then(
              () => setCopied("yes"),
              () => setCopied("failed"),
            )
          }
        >
          {copied === "yes" ? "Copied" : "Copy"}
        </button>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
      {copied === "failed" ? <p className="muted">The browser did not allow copying: select the key and copy it.</p> : null}
      <p className="muted">
        Use it as <code>Authorization: Token &lt;key&gt;</code>, or <code>TESSERA_TOKEN</code> for the Python client.
      </p>
    </div>
  );
}

export function TokensPage() {
  useTitle("API tokens");
  const tokens = useTokens();
  const [name, setName] = useState("");
  const [lifetime, setLifetime] = useState(0);
  const [createError, setCreateError] = useState<unknown>(null);
  const [issued, setIssued] = useState<IssuedToken | null>(null);
  const [revoking, setRevoking] = useState<ApiToken | null>(null);
  const create = useWrite(
    (body: { name: string; expires_in_seconds: number | null }) => post<IssuedToken>("/auth/tokens", body),
    ["auth"],
  );
  const revoke = useWrite((id: number) => del(`/auth/tokens/${id}`), ["auth"]).mutateAsync;

  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    setCreateError(null);
    try {
      const answer = await create.mutateAsync({ name: name.trim(), expires_in_seconds: LIFETIMES[lifetime].seconds });
      setIssued(answer);
      setName("");
    } catch (failure) {
      setCreateError(failure);
    }
  };

  return (
    <div className="page admin-page">
      <div className="admin-head">
        <h1>API tokens</h1>
        <span className="muted">For scripts and the Python client. Signing in with a password makes one too.</span>
      </div>
      <form className="admin-form card" onSubmit={(event) => void submit(event)} aria-label="New token">
        <label>
          Name
          <input
            value={name}
            onChange={(event) => setName(event.target.value)}
            autoComplete="off"
            spellCheck={false}
            maxLength={100}
            placeholder="e.g. nightly export"
          />
        </label>
        <label>
          Expires after
          <select value={lifetime} onChange={(event) => setLifetime(Number(event.target.value))}>
            {LIFETIMES.map((choice, index) => (
              <option key={choice.label} value={index}>
                {choice.label}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="primary" disabled={create.isPending}>
          {create.isPending ? "Creating…" : "Create token"}
        </button>
      </form>
      <ErrorAlert error={createError} />
      {issued ? <NewKey issued={issued} onDone={() => setIssued(null)} /> : null}
      <PagedGrid
        list={tokens}
        loadingText="Loading tokens…"
        empty={<p className="muted">You have no tokens.</p>}
        className="admin-table"
        testId="tokens"
        rowKey={(token) => String(token.id)}
        rowAttributes={(token) => ({ "data-testid": `token-${token.id}` })}
        columns={[
          {
            header: "Name",
            cell: (token) => (
              <>
                {token.name || <span className="muted">unnamed</span>}
                {token.current ? <span className="badge"> this session</span> : null}
              </>
            ),
          },
          { header: "Created", cell: (token) => formatTimestamp(token.created) },
          { header: "Last used", cell: (token) => (token.last_used ? formatTimestamp(token.last_used) : "never") },
          { header: "Expires", cell: expiresText },
          {
            header: "Actions",
            hideHeader: true,
            className: "admin-actions",
            cell: (token) => (
              <button
                type="button"
                className="small danger"
                aria-label={`Revoke token ${token.name || token.id}`}
                onClick={() => setRevoking(token)}
              >
                Revoke
              </button>
            ),
          },
        ]}
      />
      {revoking ? (
        <ConfirmDialog
          title={`Revoke token ${revoking.name || `#${revoking.id}`}?`}
          action="Revoke token"
          busyLabel="Revoking…"
          onClose={() => setRevoking(null)}
          onConfirm={async () => {
            await revoke(revoking.id);
            setRevoking(null);
          }}
        >
          <p>Scripts that use it are refused from now on. This cannot be undone.</p>
        </ConfirmDialog>
      ) : null}
    </div>
  );
}
