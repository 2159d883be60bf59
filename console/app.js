// The console: sign-in, a header with navigation, breadcrumbs, the page
// for the location's hash, and a footer with the server's version. Pages
// are hash routes (#/table/ns$t), so the server serves one document.
import { html, render, useEffect, useState } from "./vendor/preact-htm-standalone.module.js";
import { api, session, signInWithPassword } from "./api.js";
import { Estate } from "./pages/estate.js";
import { Project } from "./pages/project.js";
import { Warehouse } from "./pages/warehouse.js";
import { Namespace } from "./pages/namespace.js";
import { TablePage } from "./pages/table.js";
import { Trash } from "./pages/trash.js";
import { Tasks } from "./pages/tasks.js";
import { Policy } from "./pages/policy.js";
import { Grants } from "./pages/grants.js";
import { Audit } from "./pages/audit.js";
import { Announcer } from "./announce.js";
import { NotFound } from "./ui.js";

const VERSION = document.querySelector('meta[name="lance-catalog-version"]')?.content || "";

// `#/kind/arg?k=v` → {kind, arg, query}; an address that does not decode
// names no page.
function parse(hash) {
  const [path, qs] = hash.replace(/^#\/?/, "").split("?");
  const [kind = "", ...rest] = path.split("/");
  try {
    return { kind, arg: rest.map(decodeURIComponent), query: Object.fromEntries(new URLSearchParams(qs || "")) };
  } catch {
    return { kind: "unknown", arg: [], query: {} };
  }
}

// The levels a policy page and the kinds a grants page take (anything
// else would put an address's text into an API path).
const POLICY_LEVELS = ["table", "namespace", "project"];
const GRANT_KINDS = ["table", "namespace"];

function useRoute() {
  const [route, setRoute] = useState(parse(location.hash));
  useEffect(() => {
    const on = () => setRoute(parse(location.hash));
    window.addEventListener("hashchange", on);
    // A change before this listener existed is not missed.
    on();
    return () => window.removeEventListener("hashchange", on);
  }, []);
  return route;
}

function Page({ route }) {
  const { kind, arg, query } = route;
  const given = (n) => arg.length >= n && arg.slice(0, n).every((a) => a);
  if (kind && kind !== "trash" && kind !== "audit" && !given(kind === "policy" || kind === "grants" ? 2 : 1)) {
    return html`<${NotFound} />`;
  }
  switch (kind) {
    case "project":
      return html`<${Project} project=${arg[0]} />`;
    case "warehouse":
      return html`<${Warehouse} warehouse=${arg[0]} query=${query} />`;
    case "ns":
      return html`<${Namespace} id=${arg[0]} query=${query} />`;
    case "table":
      return arg[1] === "tasks"
        ? html`<${Tasks} id=${arg[0]} query=${query} />`
        : html`<${TablePage} id=${arg[0]} query=${query} />`;
    case "trash":
      return html`<${Trash} />`;
    case "policy":
      return POLICY_LEVELS.includes(arg[0]) ? html`<${Policy} level=${arg[0]} id=${arg[1]} query=${query} />` : html`<${NotFound} />`;
    case "grants":
      return GRANT_KINDS.includes(arg[0]) ? html`<${Grants} kind=${arg[0]} id=${arg[1]} query=${query} />` : html`<${NotFound} />`;
    case "audit":
      return html`<${Audit} />`;
    case "":
      return html`<${Estate} />`;
    default:
      return html`<${NotFound} />`;
  }
}

function SignIn({ onSignedIn, reason }) {
  const [value, setValue] = useState("");
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState(reason || "");
  useEffect(() => document.getElementById("page-title")?.focus(), []);
  const refused = (err) => {
    session.clear();
    if (err.status === 401) return "That was not accepted.";
    if (err.status === 429) return "Too many failed sign-ins for that user name: try again later.";
    return err.message;
  };
  const withKey = async (e) => {
    e.preventDefault();
    session.set(value.trim());
    try {
      onSignedIn(await api("GET", "/v1/server/info"));
    } catch (err) {
      setError(refused(err));
    }
  };
  const withPassword = async (e) => {
    e.preventDefault();
    try {
      await signInWithPassword(username.trim(), password);
      setPassword("");
      onSignedIn(await api("GET", "/v1/server/info"));
    } catch (err) {
      setPassword("");
      setError(refused(err));
    }
  };
  return html`<main id="main">
    <h1 id="page-title" tabindex="-1">Sign in</h1>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <form class="signin" onSubmit=${withPassword} aria-labelledby="with-password">
      <h2 id="with-password">With a user name and password</h2>
      <label for="username">User name</label>
      <input id="username" type="text" autocomplete="username" required value=${username}
        onInput=${(e) => setUsername(e.target.value)} />
      <label for="password">Password</label>
      <input id="password" type="password" autocomplete="current-password" required value=${password}
        onInput=${(e) => setPassword(e.target.value)} />
      <button type="submit">Sign in</button>
    </form>
    <form class="signin" onSubmit=${withKey} aria-labelledby="with-key">
      <h2 id="with-key">With an API key or bearer token</h2>
      <label for="credential">API key or bearer token</label>
      <input id="credential" type="password" autocomplete="off" required value=${value}
        onInput=${(e) => setValue(e.target.value)} />
      <button type="submit">Sign in</button>
    </form>
    <p class="muted">Only a key, a token or the session a password opens is kept, in this tab, until you sign out; a password never is.</p>
  </main>`;
}

function Shell({ info, onSignOut }) {
  const route = useRoute();
  // A new page: its heading takes the focus, so a screen reader says it.
  useEffect(() => {
    const t = setTimeout(() => document.getElementById("page-title")?.focus(), 0);
    return () => clearTimeout(t);
  }, [location.hash]);
  const signs = info.features && info.features.includes("auth");
  return html`
    <a class="skip" href="#main" onClick=${(e) => { e.preventDefault(); document.getElementById("page-title")?.focus(); }}>Skip to content</a>
    <header>
      <span class="brand">lance-catalog</span>
      <nav aria-label="Main">
        <ul>
          <li><a href="#/">Estate</a></li>
          <li><a href="#/trash">Trash</a></li>
          <li><a href="#/audit">Audit</a></li>
        </ul>
      </nav>
      ${signs && html`<button type="button" class="signout" onClick=${onSignOut}>Sign out</button>`}
    </header>
    <main id="main"><${Page} route=${route} /></main>
    <${Announcer} />
    <footer>lance-catalog ${VERSION || info.version}</footer>`;
}

function App() {
  const [info, setInfo] = useState(undefined);
  const [reason, setReason] = useState("");
  useEffect(() => {
    // With --auth none the server answers anyone, and says so.
    api("GET", "/v1/server/info").then(setInfo, (e) => {
      setInfo(null);
      if (e.status !== 401) setReason(e.message);
    });
    const out = () => {
      setInfo(null);
      setReason("You were signed out: the server no longer accepts the credential.");
    };
    window.addEventListener("lance-catalog:signed-out", out);
    return () => window.removeEventListener("lance-catalog:signed-out", out);
  }, []);
  if (info === undefined) return html`<main id="main"><p class="muted">Loading…</p></main>`;
  if (info === null) return html`<${SignIn} reason=${reason} onSignedIn=${(i) => { setReason(""); setInfo(i); }} />`;
  const signOut = () => {
    // A session a password opened is ended on the server too.
    if ((session.get() || "").startsWith("lcs_")) api("DELETE", "/v1/sessions").catch(() => {});
    session.clear();
    setReason("");
    setInfo(null);
  };
  return html`<${Shell} info=${info} onSignOut=${signOut} />`;
}

render(html`<${App} />`, document.getElementById("app"));
