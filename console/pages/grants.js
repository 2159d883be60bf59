// Grants on a namespace or a table (read-only).
import { html } from "../vendor/preact-htm-standalone.module.js";
import { pages } from "../api.js";
import { Crumbs } from "../crumbs.js";
import { PagedList, Table, Time, usePaged } from "../ui.js";

export function Grants({ kind, id, query }) {
  const parts = id.split("$");
  const grants = usePaged(pages("/v1/grants", "grants", { resource_kind: kind, resource_id: parts }), [kind, id]);
  return html`<${Crumbs} query=${query} parts=${parts} table=${kind === "table"} tail="Grants" />
    <h1 id="page-title" tabindex="-1">Grants on ${kind} ${parts.join(".")}</h1>
    <${PagedList} paged=${grants} what="grants" table=${(items) => html`<${Table} caption="Grants" empty="No grants on this object."
      columns=${["Principal", "Relation", "Granted by", "Granted"]}
      rows=${items.map((g) => [g.principal, g.relation, g.granted_by || "—", html`<${Time} ms=${g.created_at_ms} />`])} />`} />`;
}
