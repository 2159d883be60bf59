// A namespace: its child namespaces and its tables, as far as the user
// may list them, with links to its policy and grants.
import { html } from "../vendor/preact-htm-standalone.module.js";
import { idPath, pages } from "../api.js";
import { Crumbs, nsLink, qs, tableLink } from "../crumbs.js";
import { PagedList, usePaged } from "../ui.js";

export function Namespace({ id, query }) {
  const parts = id.split("$");
  const path = idPath(parts);
  const children = usePaged(pages(`/v1/namespace/${path}/list`, "namespaces"), [id]);
  const tables = usePaged(pages(`/v1/namespace/${path}/table/list`, "tables"), [id]);
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
      <${PagedList} paged=${children} what="namespaces" render=${(n) => html`<a href=${nsLink([...parts, n], query)}>${n}</a>`} />
    </section>
    <section aria-labelledby="tables-h">
      <h2 id="tables-h">Tables</h2>
      <${PagedList} paged=${tables} what="tables" render=${(t) => html`<a href=${tableLink([...parts, t], query)}>${t}</a>`} />
    </section>`;
}
