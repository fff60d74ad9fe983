import { useEffect, useMemo, useState } from "preact/hooks";
import { Api, messageOf, type Session } from "./client/api";
import { ApiContext, FeedContext } from "./context";
import { OrgFeed, type StreamState } from "./org-feed";
import { AgentPage } from "./pages/agent-page";
import { AgentsPage } from "./pages/agents-page";
import { SignIn } from "./pages/sign-in";
import { useRoute } from "./router";
import { clearSession, loadSession, saveSession, signInWithCode, signInWithToken } from "./session";

const CODE_PREFIX = "#code=";

export function App() {
  const [session, setSession] = useState<Session | undefined>(loadSession);
  const [orgs, setOrgs] = useState<string[]>(() => (session ? [session.org] : []));
  const [notice, setNotice] = useState<string>();
  // A sign-in link (`wardrik console`) carries a one-time code in the fragment, which the server never sees.
  const [code] = useState(() => (location.hash.startsWith(CODE_PREFIX) ? location.hash.slice(CODE_PREFIX.length) : undefined));

  const signedIn = (r: { session: Session; orgs: string[] }) => {
    saveSession(r.session);
    setOrgs(r.orgs);
    setNotice(undefined);
    setSession(r.session);
  };

  useEffect(() => {
    if (code === undefined) return;
    history.replaceState(null, "", `${location.pathname}${location.search}#/`);
    signInWithCode(code).then(signedIn, (e: unknown) => setNotice(messageOf(e)));
  }, [code]);

  // The orgs the admin token may switch to: unknown after a reload, and an org made since signing in must show, so the
  // switch asks again when it gets the focus.
  const refreshOrgs = () => {
    if (!session) return;
    signInWithToken(session.token).then(
      (r) => setOrgs(r.orgs),
      () => undefined,
    );
  };
  useEffect(() => {
    if (code === undefined) refreshOrgs();
  }, [session?.token]);

  const signOut = (why?: string) => {
    clearSession();
    setSession(undefined);
    setNotice(why);
  };

  if (!session) return <SignIn busy={code !== undefined && notice === undefined} notice={notice} onSignedIn={signedIn} />;
  return (
    <Shell
      key={session.org}
      session={session}
      orgs={orgs}
      onRefreshOrgs={refreshOrgs}
      onSwitchOrg={(org) => {
        const next = { ...session, org };
        saveSession(next);
        location.hash = "#/";
        setSession(next);
      }}
      onSignOut={signOut}
    />
  );
}

interface ShellProps {
  session: Session;
  orgs: string[];
  onRefreshOrgs: () => void;
  onSwitchOrg: (org: string) => void;
  onSignOut: (why?: string) => void;
}

function Shell({ session, orgs, onRefreshOrgs, onSwitchOrg, onSignOut }: ShellProps) {
  const api = useMemo(() => new Api(session, () => onSignOut("The token is no longer valid; sign in again.")), [session]);
  const feed = useMemo(() => new OrgFeed(api), [api]);
  const [feedState, setFeedState] = useState<StreamState>("connecting");
  const route = useRoute();

  useEffect(() => {
    const ac = new AbortController();
    const off = feed.onState(setFeedState);
    feed.start(ac.signal);
    return () => {
      off();
      ac.abort();
    };
  }, [feed]);

  return (
    <ApiContext.Provider value={api}>
      <FeedContext.Provider value={feed}>
        <header class="top">
          <a class="brand" href="#/">
            Wardrik
          </a>
          <nav aria-label="Main">
            <a href="#/" aria-current={route.page === "agents" ? "page" : undefined}>
              Agents
            </a>
          </nav>
          <span class={`feed feed-${feedState}`} role="status" title="Updates arrive from the daemon as they happen">
            {feedState === "live" ? "Live" : feedState === "stopped" ? "Offline" : "Connecting…"}
          </span>
          <div class="who">
            {session.admin ? (
              <label class="org-switch">
                Org
                <select value={session.org} onFocus={onRefreshOrgs} onChange={(e) => onSwitchOrg((e.target as HTMLSelectElement).value)}>
                  {[...new Set([...orgs, session.org])].sort().map((o) => (
                    <option key={o} value={o}>
                      {o}
                    </option>
                  ))}
                </select>
              </label>
            ) : (
              <span class="org">Org {session.org}</span>
            )}
            <button type="button" onClick={() => onSignOut()}>
              Sign out
            </button>
          </div>
        </header>
        <main id="main">
          {route.page === "agents" ? (
            <AgentsPage />
          ) : route.page === "agent" ? (
            <AgentPage key={route.id} id={route.id} tab={route.tab} run={route.run} />
          ) : (
            <section>
              <h1>Not found</h1>
              <p>
                There is no page {route.path}. <a href="#/">See the agents</a>.
              </p>
            </section>
          )}
        </main>
      </FeedContext.Provider>
    </ApiContext.Provider>
  );
}
