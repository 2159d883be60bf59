// Grants on an object (read-only), and the audit trail (server admins).
import { html } from "../vendor/preact-htm-standalone.module.js";
import { api } from "../api.js";
import { Crumbs } from "../crumbs.js";
import { Failure, Loading, MoreButton, Table, Time, usePaged } from "../ui.js";

function Paged({ paged, what, table }) {
  if (paged.error) return html`<${Failure} error=${paged.error} what=${what} />`;
  if (!paged.done) return html`<${Loading} what=${what} />`;
  return html`${table(paged.items)}<${MoreButton} paged=${paged} what=${what} />`;
}

const resource = (r) => (r ? `${r.kind || ""} ${Array.isArray(r.id) ? r.id.join(".") : r.id || ""}`.trim() : "—");

export function Grants({ kind, id, query }) {
  const parts = id.split("$");
  const grants = usePaged(
    (token) =>
      api("GET", "/v1/grants", { query: { resource_kind: kind, resource_id: parts, page_token: token, limit: 50 } }).then((a) => ({
        items: a.grants || [],
        next: a.page_token,
      })),
    [kind, id],
  );
  return html`<${Crumbs} query=${query} parts=${parts} table=${kind === "table"} tail="Grants" />
    <h1 id="page-title" tabindex="-1">Grants on ${kind} ${parts.join(".")}</h1>
    <${Paged} paged=${grants} what="grants" table=${(items) => html`<${Table} caption="Grants" empty="No grants on this object."
      columns=${["Principal", "Relation", "Granted by", "Granted"]}
      rows=${items.map((g) => [g.principal, g.relation, g.granted_by || "—", html`<${Time} ms=${g.created_at_ms} />`])} />`} />`;
}

export function Audit() {
  const events = usePaged(
    (token) => api("GET", "/v1/events", { query: { page_token: token, limit: 100 } }).then((a) => ({ items: a.events || [], next: a.page_token })),
    [],
  );
  return html`<${Crumbs} tail="Audit" />
    <h1 id="page-title" tabindex="-1">Audit trail</h1>
    <${Paged} paged=${events} what="the audit trail" table=${(items) => html`<${Table} caption="Events (oldest first)" empty="No events."
      columns=${["When", "Who", "Action", "On", "Outcome"]}
      rows=${items.map((e) => [html`<${Time} ms=${e.at_ms} />`, e.principal || "anonymous", e.action, resource(e.resource), e.outcome])} />`} />`;
}
