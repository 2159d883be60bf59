// A project: its warehouses, and a link to its maintenance policy.
import { html } from "../vendor/preact-htm-standalone.module.js";
import { pages } from "../api.js";
import { Crumbs, qs } from "../crumbs.js";
import { PagedList, usePaged } from "../ui.js";

export function Project({ project }) {
  const warehouses = usePaged(pages("/v1/warehouses", "warehouses", { project_id: project }), [project]);
  return html`
    <${Crumbs} query=${{ project }} />
    <h1 id="page-title" tabindex="-1">Project ${project}</h1>
    <p><a href=${`#/policy/project/${encodeURIComponent(project)}`}>Maintenance policy</a></p>
    <h2>Warehouses</h2>
    <${PagedList} paged=${warehouses} what="warehouses" render=${(w) =>
      html`<a href=${`#/warehouse/${encodeURIComponent(w.warehouse_id)}${qs({ project })}`}>${w.warehouse_id}</a>
        ${w.status && w.status !== "active" && html` <span class="badge">${w.status}</span>`}`} />`;
}
