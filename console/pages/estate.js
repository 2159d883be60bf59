// The estate's top: projects, and the namespaces at the root (each bound
// to one warehouse), as far as the signed-in user may list them.
import { html } from "../vendor/preact-htm-standalone.module.js";
import { pages } from "../api.js";
import { Crumbs, nsLink } from "../crumbs.js";
import { PagedList, usePaged } from "../ui.js";

export function Estate() {
  const projects = usePaged(pages("/v1/projects", "projects"), []);
  const roots = usePaged(pages("/v1/namespace/$/list", "namespaces"), []);
  return html`
    <${Crumbs} />
    <h1 id="page-title" tabindex="-1">Estate</h1>
    <section aria-labelledby="projects-h">
      <h2 id="projects-h">Projects</h2>
      <${PagedList} paged=${projects} what="projects" render=${(p) =>
        html`<a href=${`#/project/${encodeURIComponent(p.project_id)}`}>${p.project_id}</a>
          ${p.description && html` <span class="muted">${p.description}</span>`}`} />
    </section>
    <section aria-labelledby="roots-h">
      <h2 id="roots-h">Namespaces</h2>
      <${PagedList} paged=${roots} what="namespaces" render=${(n) => html`<a href=${nsLink([n])}>${n}</a>`} />
    </section>`;
}
