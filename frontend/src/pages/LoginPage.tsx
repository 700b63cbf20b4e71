import { useEffect, useState, type FormEvent } from "react";
import { ApiError, get, post, type User } from "../api";
import { useTitle } from "../router";

export function LoginPage({ onLogin }: { onLogin: (user: User) => void }) {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useTitle("Log in");

  // Make sure the CSRF cookie exists before the form posts.
  useEffect(() => {
    get("/auth/csrf").catch(() => undefined);
  }, []);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onLogin(await post<User>("/auth/login", { username, password }));
    } catch (failure) {
      setError(failure instanceof ApiError ? failure.message : "Logging in failed.");
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="login">
      <form className="card login-card" onSubmit={submit} aria-label="Log in">
        <h1>Tessera</h1>
        <p className="muted">SQL workbench and catalog for Apache Spark</p>
        <label>
          Username
          <input
            name="username"
            autoComplete="username"
            autoFocus
            value={username}
            onChange={(event) => setUsername(event.target.value)}
            required
          />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={(event) => setPassword(event.target.value)}
            required
          />
        </label>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? "Logging in…" : "Log in"}
        </button>
      </form>
    </div>
  );
}
