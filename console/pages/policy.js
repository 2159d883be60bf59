// The effective maintenance policy of a table, namespace or project: each
// field's value, whether it is set here or inherited and from where, and
// the record that won.
import { html } from "../vendor/preact-htm-standalone.module.js";
import { api, idPath } from "../api.js";
import { Crumbs } from "../crumbs.js";
import { Loaded, Table, Time, useLoad } from "../ui.js";

const show = (v) => (v === null || v === undefined ? "—" : typeof v === "object" ? JSON.stringify(v) : String(v));

export function Policy({ level, id, query }) {
  const parts = level === "project" ? [] : id.split("$");
  const path =
    level === "project" ? `/v1/projects/${encodeURIComponent(id)}/maintenance_policy` : `/v1/${level}/${idPath(parts)}/maintenance_policy`;
  const [data, error] = useLoad(() => api("GET", path), [level, id]);
  const crumbQuery = level === "project" ? { ...query, project: id } : query;
  return html`<${Crumbs} query=${crumbQuery} parts=${parts} table=${level === "table"} tail="Maintenance policy" />
    <h1 id="page-title" tabindex="-1">Maintenance policy of ${level} ${level === "project" ? id : parts.join(".")}</h1>
    <${Loaded} data=${data} error=${error} what="the policy">${(p) => {
      const w = p.winner || {};
      const sources = p.sources || {};
      const fields = Object.entries(p.policy || {});
      return html`
        <p>The record that won: <strong>${!w.level || w.level === "server" ? "the server's defaults" : `${w.level} ${Array.isArray(w.id) ? w.id.join(".") : w.id}`}</strong>
          ${w.updated_by && html`, set by ${w.updated_by} on <${Time} ms=${w.updated_at_ms} />`}.</p>
        <${Table} caption="Policy fields" columns=${["Field", "Value", "Set", "From"]}
          rows=${fields.map(([name, value]) => {
            const s = sources[name] || {};
            const from = s.from ? (typeof s.from === "object" ? `${s.from.level || ""} ${Array.isArray(s.from.id) ? s.from.id.join(".") : s.from.id || ""}` : s.from) : "—";
            return [name, show(value), s.state === "set_here" ? "set here" : "inherited", from];
          })} />`;
    }}<//>`;
}
