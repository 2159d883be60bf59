// A warehouse: its top-level namespaces.
import { html } from "../vendor/preact-htm-standalone.module.js";
import { pages } from "../api.js";
import { Crumbs, nsLink } from "../crumbs.js";
import { PagedList, usePaged } from "../ui.js";

export function Warehouse({ warehouse, query }) {
  const ctx = { project: query.project, warehouse };
  const namespaces = usePaged(pages(`/v1/warehouses/${encodeURIComponent(warehouse)}/namespaces`, "namespaces"), [warehouse]);
  return html`
    <${Crumbs} query=${ctx} />
    <h1 id="page-title" tabindex="-1">Warehouse ${warehouse}</h1>
    <h2>Namespaces</h2>
    <${PagedList} paged=${namespaces} what="namespaces" render=${(n) => html`<a href=${nsLink([n], ctx)}>${n}</a>`} />`;
}
