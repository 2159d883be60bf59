// The estate as a tree: projects > warehouses > namespaces > tables, each
// level listed as the API pages it, showing what the server lets the
// signed-in user see.
import { html } from "../vendor/preact-htm-standalone.module.js";
import { api, idPath } from "../api.js";
import { Crumbs, nsLink, tableLink, qs } from "../crumbs.js";
import { Failure, Loading, MoreButton, usePaged } from "../ui.js";

const PAGE = 50;

function List({ paged, what, render }) {
  if (paged.error) return html`<${Failure} error=${paged.error} what=${what} />`;
  if (!paged.done) return html`<${Loading} what=${what} />`;
  if (!paged.items.length) return html`<p class="muted">No ${what}.</p>`;
  return html`<ul class="tree">${paged.items.map((it) => html`<li>${render(it)}</li>`)}</ul>
    <${MoreButton} paged=${paged} what=${what} />`;
}

const page = (path, key, extra) => (token) =>
  api("GET", path, { query: { ...extra, page_token: token, limit: PAGE } }).then((a) => ({
    items: a[key] || [],
    next: a.page_token,
  }));

export function Estate() {
  const projects = usePaged(page("/v1/projects", "projects"), []);
  const roots = usePaged(page("/v1/namespace/$/list", "namespaces"), []);
  return html`
    <${Crumbs} />
    <h1 id="page-title" tabindex="-1">Estate</h1>
    <section aria-labelledby="projects-h">
      <h2 id="projects-h">Projects</h2>
      <${List} paged=${projects} what="projects" render=${(p) =>
        html`<a href=${`#/project/${encodeURIComponent(p.project_id)}`}>${p.project_id}</a>
          ${p.description && html` <span class="muted">${p.description}</span>`}`} />
    </section>
    <section aria-labelledby="roots-h">
      <h2 id="roots-h">Namespaces</h2>
      <${List} paged=${roots} what="namespaces" render=${(n) => html`<a href=${nsLink([n])}>${n}</a>`} />
    </section>`;
}

export function Project({ project }) {
  const warehouses = usePaged(page("/v1/warehouses", "warehouses", { project_id: project }), [project]);
  return html`
    <${Crumbs} query=${{ project }} />
    <h1 id="page-title" tabindex="-1">Project ${project}</h1>
    <p><a href=${`#/policy/project/${encodeURIComponent(project)}`}>Maintenance policy</a></p>
    <h2>Warehouses</h2>
    <${List} paged=${warehouses} what="warehouses" render=${(w) =>
      html`<a href=${`#/warehouse/${encodeURIComponent(w.warehouse_id)}${qs({ project })}`}>${w.warehouse_id}</a>
        ${w.status && w.status !== "active" && html` <span class="badge">${w.status}</span>`}`} />`;
}

export function Warehouse({ warehouse, query }) {
  const ctx = { project: query.project, warehouse };
  const namespaces = usePaged(page(`/v1/warehouses/${encodeURIComponent(warehouse)}/namespaces`, "namespaces"), [warehouse]);
  return html`
    <${Crumbs} query=${ctx} />
    <h1 id="page-title" tabindex="-1">Warehouse ${warehouse}</h1>
    <h2>Namespaces</h2>
    <${List} paged=${namespaces} what="namespaces" render=${(n) => html`<a href=${nsLink([n], ctx)}>${n}</a>`} />`;
}

export function Namespace({ id, query }) {
  const parts = id.split("$");
  const path = idPath(parts);
  const children = usePaged(page(`/v1/namespace/${path}/list`, "namespaces"), [id]);
  const tables = usePaged(page(`/v1/namespace/${path}/table/list`, "tables"), [id]);
  return html`
    <${Crumbs} query=${query} parts=${parts} />
    <h1 id="page-title" tabindex="-1">Namespace ${parts.join(".")}</h1>
    <p>
      <a href=${`#/policy/namespace/${encodeURIComponent(id)}${qs(query)}`}>Maintenance policy</a>
      ${" · "}
      <a href=${`#/grants/namespace/${encodeURIComponent(id)}${qs(query)}`}>Grants</a>
    </p>
    <section aria-labelledby="children-h">
      <h2 id="children-h">Namespaces</h2>
      <${List} paged=${children} what="namespaces" render=${(n) => html`<a href=${nsLink([...parts, n], query)}>${n}</a>`} />
    </section>
    <section aria-labelledby="tables-h">
      <h2 id="tables-h">Tables</h2>
      <${List} paged=${tables} what="tables" render=${(t) => html`<a href=${tableLink([...parts, t], query)}>${t}</a>`} />
    </section>`;
}
