// The shell: login gate, top navigation, and the page for the current path. The editor
// stays mounted while other pages show, so its tabs, sessions and running jobs survive.
import { useCallback, useEffect, useState } from "react";
import { get, onUnauthenticated, post, type User } from "./api";
import { Link, navigate, useLocation } from "./router";
import { LoginPage } from "./pages/LoginPage";
import { EditorPage } from "./pages/editor/EditorPage";
import { CatalogPage } from "./pages/catalog/CatalogPage";
import { JobsPage } from "./pages/jobs/JobsPage";
import { JobPage } from "./pages/jobs/JobPage";
import { SavedQueriesPage } from "./pages/jobs/SavedQueriesPage";
import { AuditPage } from "./pages/admin/AuditPage";
import { TeamPage } from "./pages/admin/TeamPage";
import { TeamsPage } from "./pages/admin/TeamsPage";
import { TokensPage } from "./pages/account/TokensPage";
import { EnginesPage } from "./pages/engines/EnginesPage";
import { NotificationBell, SchedulesPage } from "./pages/schedules/SchedulesPage";
import { DashboardsPage } from "./pages/dashboards/DashboardsPage";
import { ShortcutHelp } from "./pages/editor/ShortcutHelp";

/** Typing into a field: single-key shortcuts stay out of the way. */
function typing(target: EventTarget | null): boolean {
  const element = target as HTMLElement | null;
  return !!element && (element.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(element.tagName));
}

const SECTION_KEYS: Record<string, string> = { KeyE: "/editor", KeyC: "/catalog", KeyJ: "/jobs", KeyS: "/saved" };

type Section =
  | "editor"
  | "catalog"
  | "jobs"
  | "engines"
  | "saved"
  | "schedules"
  | "dashboards"
  | "teams"
  | "audit"
  | "tokens"
  | "missing";

function sectionOf(pathname: string): Section {
  const first = pathname.split("/").filter(Boolean)[0] ?? "editor";
  if (first === "editor" || first === "login") return "editor";
  if (["catalog", "jobs", "engines", "saved", "schedules", "dashboards", "teams", "audit", "tokens"].includes(first))
    return first as Section;
  return "missing";
}

export function App() {
  const [user, setUser] = useState<User | null | undefined>(undefined);
  const [help, setHelp] = useState(false);
  const { pathname } = useLocation();

  // Global shortcuts: "?" toggles the list, Alt+Shift+E/C/J/S go to a section.
  useEffect(() => {
    if (!user) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key === "?" && !event.ctrlKey && !event.metaKey && !event.altKey && !typing(event.target)) {
        event.preventDefault();
        setHelp((shown) => !shown);
      } else if (event.altKey && event.shiftKey && !event.ctrlKey && SECTION_KEYS[event.code]) {
        event.preventDefault();
        navigate(SECTION_KEYS[event.code]);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [user]);

  const loadUser = useCallback(() => {
    // /auth/session answers 200 either way: no 401 in the console for a visitor.
    get<{ user: User | null }>("/auth/session")
      .then((state) => setUser(state.user))
      .catch(() => setUser(null));
  }, []);

  useEffect(() => {
    loadUser();
    return onUnauthenticated(() => setUser(null));
  }, [loadUser]);

  if (user === undefined) return <div className="boot">Loading…</div>;
  if (user === null)
    return (
      <LoginPage
        onLogin={(me) => {
          setUser(me);
          if (pathname === "/login") navigate("/", true);
        }}
      />
    );

  const section = sectionOf(pathname);
  const segments = pathname
    .split("/")
    .filter(Boolean)
    .map((segment) => decodeURIComponent(segment));
  const logout = async () => {
    await post("/auth/logout").catch(() => undefined);
    setUser(null);
    navigate("/", true);
  };

  return (
    <div className="app">
      <header className="topbar">
        <Link to="/" className="brand" aria-label="Tessera home">
          Tessera
        </Link>
        <nav className="mainnav" aria-label="Main">
          <Link to="/editor" aria-current={section === "editor" ? "page" : undefined}>
            Editor
          </Link>
          <Link to="/catalog" aria-current={section === "catalog" ? "page" : undefined}>
            Catalog
          </Link>
          <Link to="/jobs" aria-current={section === "jobs" ? "page" : undefined}>
            Jobs
          </Link>
          <Link to="/engines" aria-current={section === "engines" ? "page" : undefined}>
            Engines
          </Link>
          <Link to="/saved" aria-current={section === "saved" ? "page" : undefined}>
            Saved queries
          </Link>
          <Link to="/schedules" aria-current={section === "schedules" ? "page" : undefined}>
            Schedules
          </Link>
          <Link to="/dashboards" aria-current={section === "dashboards" ? "page" : undefined}>
            Dashboards
          </Link>
          <Link to="/teams" aria-current={section === "teams" ? "page" : undefined}>
            Teams
          </Link>
          {user.is_admin ? (
            <Link to="/audit" aria-current={section === "audit" ? "page" : undefined}>
              Audit
            </Link>
          ) : null}
        </nav>
        <div className="userbox">
          <button type="button" className="link" aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)" onClick={() => setHelp(true)}>
            ?
          </button>
          <NotificationBell />
          <span className="username" data-testid="username">
            {user.username}
          </span>
          <Link to="/tokens" aria-current={section === "tokens" ? "page" : undefined} title="API tokens for scripts">
            Tokens
          </Link>
          <button type="button" className="link" onClick={logout}>
            Log out
          </button>
        </div>
      </header>
      <main className="content">
        <div className="page" hidden={section !== "editor"}>
          <EditorPage user={user} active={section === "editor"} />
        </div>
        {section === "catalog" && <CatalogPage />}
        {section === "jobs" && (pathname.split("/").filter(Boolean).length > 1 ? <JobPage /> : <JobsPage user={user} />)}
        {section === "engines" && <EnginesPage user={user} />}
        {section === "saved" && <SavedQueriesPage user={user} />}
        {section === "schedules" && <SchedulesPage />}
        {section === "dashboards" && <DashboardsPage />}
        {section === "teams" &&
          (segments.length > 1 ? <TeamPage key={segments[1]} name={segments[1]} user={user} /> : <TeamsPage user={user} />)}
        {section === "audit" && <AuditPage user={user} />}
        {section === "tokens" && <TokensPage />}
        {section === "missing" && (
          <div className="page narrow">
            <h1>Page not found</h1>
            <p>
              Nothing lives at this address. <Link to="/">Back to the editor</Link>.
            </p>
          </div>
        )}
      </main>
      {help && <ShortcutHelp onClose={() => setHelp(false)} />}
    </div>
  );
}
