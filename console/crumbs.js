// Breadcrumbs: Estate > project > warehouse > namespaces > table, with the
// current page marked.
import { html } from "./vendor/preact-htm-standalone.module.js";

export const nsLink = (parts, query) => `#/ns/${encodeURIComponent(parts.join("$"))}${qs(query)}`;
export const tableLink = (parts, query) => `#/table/${encodeURIComponent(parts.join("$"))}${qs(query)}`;

export function qs(query) {
  const kept = Object.entries(query || {}).filter(([, v]) => v);
  return kept.length ? `?${new URLSearchParams(kept)}` : "";
}

// `parts`: a namespace's or table's id; the last is the page itself unless
// `tail` names a page below it.
export function Crumbs({ query = {}, parts = [], table = false, tail }) {
  const items = [{ href: "#/", label: "Estate" }];
  if (query.project) items.push({ href: `#/project/${encodeURIComponent(query.project)}`, label: `Project ${query.project}` });
  if (query.warehouse) items.push({ href: `#/warehouse/${encodeURIComponent(query.warehouse)}${qs({ project: query.project })}`, label: `Warehouse ${query.warehouse}` });
  parts.forEach((p, i) => {
    const upto = parts.slice(0, i + 1);
    const last = i === parts.length - 1;
    items.push({ href: last && table ? tableLink(upto, query) : nsLink(upto, query), label: p });
  });
  if (tail) items.push({ href: location.hash, label: tail });
  return html`<nav aria-label="Breadcrumb" class="crumbs"><ol>
    ${items.map((it, i) => i === items.length - 1
      ? html`<li><a href=${it.href} aria-current="page">${it.label}</a></li>`
      : html`<li><a href=${it.href}>${it.label}</a></li>`)}
  </ol></nav>`;
}
