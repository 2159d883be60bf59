// A table: schema (nested fields and their metadata), rows, size,
// versions, tags, branches, indices with their unindexed rows, properties
// and deletion protection. Each section loads on its own, so one the user
// may not see says so and the others still show.
import { html } from "../vendor/preact-htm-standalone.module.js";
import { api, idPath } from "../api.js";
import { Crumbs, qs } from "../crumbs.js";
import { Loaded, Table, Time, bytes, useLoad } from "../ui.js";

function typeName(t) {
  if (!t) return "";
  // A decimal's precision and scale travel as precision × 1000 + scale.
  if (/^decimal/i.test(t.type) && typeof t.length === "number") {
    return `${t.type}(${Math.floor(t.length / 1000)}, ${t.length % 1000})`;
  }
  const child = t.fields && t.fields.length && /list/i.test(t.type) ? `<${typeName(t.fields[0].type)}>` : "";
  return `${t.type}${t.length !== undefined && t.length !== null ? `[${t.length}]` : ""}${child}`;
}

// Every field, nested ones under their parent's path.
function flatten(fields, prefix = "", depth = 0, out = []) {
  for (const f of fields || []) {
    const path = prefix ? `${prefix}.${f.name}` : f.name;
    out.push({ path, depth, field: f });
    const kids = f.type && f.type.fields;
    if (kids && !/list/i.test(f.type.type)) flatten(kids, path, depth + 1, out);
  }
  return out;
}

const meta = (m) =>
  m && Object.keys(m).length
    ? html`<dl class="meta">${Object.entries(m).map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`
    : html`<span class="muted">—</span>`;

function Schema({ schema }) {
  const rows = flatten(schema.fields).map(({ path, depth, field }) => [
    html`<span class=${`depth-${Math.min(depth, 4)}`}>${path}</span>`,
    typeName(field.type),
    field.nullable ? "yes" : "no",
    meta(field.metadata),
  ]);
  return html`<${Table} caption="Schema" columns=${["Field", "Type", "Nullable", "Metadata"]} rows=${rows} />
    ${schema.metadata && Object.keys(schema.metadata).length ? html`<h4>Schema metadata</h4>${meta(schema.metadata)}` : null}`;
}

function Section({ title, load, deps, children }) {
  const [data, error] = useLoad(load, deps);
  const id = `${title.toLowerCase().replace(/\W+/g, "-")}-h`;
  return html`<section aria-labelledby=${id}>
    <h2 id=${id}>${title}</h2>
    <${Loaded} data=${data} error=${error} what=${title.toLowerCase()}>${children}<//>
  </section>`;
}

export function TablePage({ id, query }) {
  const parts = id.split("$");
  const path = `/v1/table/${idPath(parts)}`;
  const link = encodeURIComponent(id);
  return html`
    <${Crumbs} query=${query} parts=${parts} table=${true} />
    <h1 id="page-title" tabindex="-1">Table ${parts.join(".")}</h1>
    <p>
      <a href=${`#/table/${link}/tasks${qs(query)}`}>Maintenance tasks</a>${" · "}
      <a href=${`#/policy/table/${link}${qs(query)}`}>Maintenance policy</a>${" · "}
      <a href=${`#/grants/table/${link}${qs(query)}`}>Grants</a>
    </p>
    <${Section} title="Overview" deps=${[id]} load=${async () => {
      const [described, rows, stats] = await Promise.all([
        api("POST", `${path}/describe`, { body: { load_detailed_metadata: true, vend_credentials: false } }),
        api("POST", `${path}/count_rows`, { body: {} }),
        // Sizes need a right some readers lack: the rest still shows.
        api("POST", `${path}/stats`, { body: {} }).catch((e) => {
          if (e.status === 403) return {};
          throw e;
        }),
      ]);
      return { described, rows, stats };
    }}>${({ described, rows, stats }) => {
      const props = described.properties || {};
      const own = Object.entries(props).filter(([k]) => !k.startsWith("lance-catalog."));
      return html`
        <dl class="facts">
          <dt>Rows</dt><dd>${Number(rows).toLocaleString()}</dd>
          <dt>Storage size</dt><dd>${bytes(stats.total_bytes)}</dd>
          <dt>Version</dt><dd>${described.version}</dd>
          <dt>Fragments</dt><dd>${(described.stats && described.stats.num_fragments) ?? (stats.fragment_stats && stats.fragment_stats.num_fragments) ?? "—"}</dd>
          <dt>Deletion protection</dt><dd>${props["lance-catalog.protected"] === "true" ? "on" : "off"}</dd>
          <dt>Location</dt><dd><code>${described.location || "—"}</code></dd>
        </dl>
        <h3>Schema</h3>
        <${Schema} schema=${described.schema || { fields: [] }} />
        <h3>Properties</h3>
        <${Table} caption="Properties" columns=${["Key", "Value"]} rows=${own.map(([k, v]) => [k, v])} />`;
    }}<//>
    <${Section} title="Versions" deps=${[id]} load=${() =>
      api("POST", `${path}/version/list`, { query: { descending: true, limit: 20 }, body: {} })}>${(a) =>
      html`<${Table} caption="Versions (newest first)" columns=${["Version", "Committed", "Manifest size"]}
        rows=${(a.versions || []).map((v) => [v.version, html`<${Time} ms=${v.timestamp_millis} />`, bytes(v.manifest_size)])} />`}<//>
    <${Section} title="Tags" deps=${[id]} load=${() => api("POST", `${path}/tags/list`, { body: {} })}>${(a) =>
      html`<${Table} caption="Tags" columns=${["Tag", "Version", "Branch"]}
        rows=${Object.entries(a.tags || {}).map(([name, t]) => [name, t.version, t.branch || "main"])} />`}<//>
    <${Section} title="Branches" deps=${[id]} load=${() => api("POST", `${path}/branches/list`, { body: {} })}>${(a) =>
      html`<${Table} caption="Branches" columns=${["Branch", "From", "At version", "Created"]}
        rows=${Object.entries(a.branches || {}).map(([name, b]) => [name, b.parentBranch || "main", b.parentVersion, html`<${Time} ms=${b.createAt * 1000} />`])} />`}<//>
    <${Section} title="Indices" deps=${[id]} load=${() => api("POST", `${path}/index/list`, { body: {} })}>${(a) =>
      html`<${Table} caption="Indices" columns=${["Index", "Columns", "Type", "Indexed rows", "Unindexed rows", "Size"]}
        rows=${(a.indexes || []).map((i) => [i.index_name, (i.columns || []).join(", "), i.index_type, i.num_indexed_rows, i.num_unindexed_rows, bytes(i.size_bytes)])} />`}<//>`;
}
