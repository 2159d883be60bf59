// The audit trail (server admins), oldest first as the API pages it.
import { html } from "../vendor/preact-htm-standalone.module.js";
import { pages } from "../api.js";
import { Crumbs } from "../crumbs.js";
import { PagedList, Table, Time, usePaged } from "../ui.js";

const resource = (r) => (r ? `${r.kind || ""} ${Array.isArray(r.id) ? r.id.join(".") : r.id || ""}`.trim() : "—");

export function Audit() {
  const events = usePaged(pages("/v1/events", "events", {}, 100), []);
  return html`<${Crumbs} tail="Audit" />
    <h1 id="page-title" tabindex="-1">Audit trail</h1>
    <${PagedList} paged=${events} what="the audit trail" table=${(items) => html`<${Table} caption="Events (oldest first)" empty="No events."
      columns=${["When", "Who", "Action", "On", "Outcome"]}
      rows=${items.map((e) => [html`<${Time} ms=${e.at_ms} />`, e.principal || "anonymous", e.action, resource(e.resource), e.outcome])} />`} />`;
}
