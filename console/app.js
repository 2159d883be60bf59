// The console: sign-in, a header with navigation, breadcrumbs, the page
// for the location's hash, and a footer with the server's version. Pages
// are hash routes (#/table/ns$t), so the server serves one document.
import { html, render, useEffect, useState } from "./vendor/preact-htm-standalone.module.js";
import { api, session } from "./api.js";
import { Estate, Project, Warehouse, Namespace } from "./pages/estate.js";
import { TablePage } from "./pages/table.js";
import { Trash } from "./pages/trash.js";
import { Tasks } from "./pages/tasks.js";
import { Policy } from "./pages/policy.js";
import { Grants, Audit } from "./pages/access.js";
import { Announcer } from "./announce.js";

const VERSION = document.querySelector('meta[name="lance-catalog-version"]')?.content || "";

// `#/kind/arg?k=v` → {kind, arg, query}
function parse(hash) {
  const [path, qs] = hash.replace(/^#\/?/, "").split("?");
  const [kind = "", ...rest] = path.split("/");
  return { kind, arg: rest.map(decodeURIComponent), query: Object.fromEntries(new URLSearchParams(qs || "")) };
}

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

function Page({ route, info }) {
  const { kind, arg, query } = route;
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
      return html`<${Policy} level=${arg[0]} id=${arg[1]} query=${query} />`;
    case "grants":
      return html`<${Grants} kind=${arg[0]} id=${arg[1]} query=${query} />`;
    case "audit":
      return html`<${Audit} />`;
    default:
      return html`<${Estate} info=${info} />`;
  }
}

function SignIn({ onSignedIn, reason }) {
  const [value, setValue] = useState("");
  const [error, setError] = useState(reason || "");
  useEffect(() => document.getElementById("page-title")?.focus(), []);
  const submit = async (e) => {
    e.preventDefault();
    session.set(value.trim());
    try {
      onSignedIn(await api("GET", "/v1/server/info"));
    } catch (err) {
      session.clear();
      setError(err.status === 401 ? "That credential was not accepted." : err.message);
    }
  };
  return html`<main id="main">
    <h1 id="page-title" tabindex="-1">Sign in</h1>
    <form class="signin" onSubmit=${submit}>
      <label for="credential">API key or bearer token</label>
      <input id="credential" type="password" autocomplete="off" required value=${value}
        onInput=${(e) => setValue(e.target.value)} />
      <button type="submit">Sign in</button>
      ${error && html`<p class="error" role="alert">${error}</p>`}
    </form>
    <p class="muted">The credential is kept in this tab only, until you sign out.</p>
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
    <main id="main"><${Page} route=${route} info=${info} /></main>
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
    session.clear();
    setReason("");
    setInfo(null);
  };
  return html`<${Shell} info=${info} onSignOut=${signOut} />`;
}

render(html`<${App} />`, document.getElementById("app"));
