// Trash: what is recoverable and until when; undrop (confirmed first) and
// purge where the server allows it.
import { html, useEffect, useRef, useState } from "../vendor/preact-htm-standalone.module.js";
import { api, idPath } from "../api.js";
import { announce } from "../announce.js";
import { Crumbs } from "../crumbs.js";
import { Failure, Loading, MoreButton, Table, Time, usePaged } from "../ui.js";

const label = (e) => `${e.kind} ${(e.id || []).join(".")}`;

// The question, with the focus on its answer, so Enter confirms.
function Confirm({ what, entry, onConfirm, onCancel }) {
  const button = useRef(null);
  useEffect(() => button.current && button.current.focus(), []);
  const verb = what === "undrop" ? "Restore" : "Purge";
  return html`<div class="confirm" role="group" aria-label=${`Confirm: ${verb.toLowerCase()} ${label(entry)}`}>
    <span>${verb} ${label(entry)}${what === "purge" ? " for good" : ""}?</span>
    <button type="button" ref=${button} onClick=${onConfirm}>${`Confirm ${what}`}</button>
    <button type="button" onClick=${onCancel}>Cancel</button>
  </div>`;
}

function Actions({ entry, onDone }) {
  const [asking, setAsking] = useState(null);
  const [error, setError] = useState("");
  const run = async (what) => {
    setError("");
    try {
      if (what === "undrop") {
        const kind = entry.kind === "namespace" ? "namespace" : "table";
        await api("POST", `/v1/${kind}/${idPath(entry.id)}/undrop`, {
          body: { trash_id: entry.trash_id, ...(kind === "namespace" ? { warehouse_id: entry.warehouse } : {}) },
        });
        announce(`${label(entry)} was restored.`);
      } else {
        await api("DELETE", `/v1/trash/${encodeURIComponent(entry.trash_id)}`, { query: { warehouse_id: entry.warehouse } });
        announce(`${label(entry)} was purged for good.`);
      }
      setAsking(null);
      onDone();
    } catch (e) {
      setError(e.status === 403 ? `You may not ${what} ${label(entry)}.` : e.message);
      announce(`Could not ${what} ${label(entry)}.`);
    }
  };
  if (asking) {
    return html`<${Confirm} what=${asking} entry=${entry} onConfirm=${() => run(asking)} onCancel=${() => setAsking(null)} />`;
  }
  return html`<span class="actions">
    ${!entry.expired && html`<button type="button" onClick=${() => setAsking("undrop")} aria-label=${`Undrop ${label(entry)}`}>Undrop</button>`}
    <button type="button" onClick=${() => setAsking("purge")} aria-label=${`Purge ${label(entry)}`}>Purge</button>
    ${error && html`<span class="error" role="alert">${error}</span>`}
  </span>`;
}

export function Trash() {
  const [round, setRound] = useState(0);
  const trash = usePaged(
    (token) => api("GET", "/v1/trash", { query: { page_token: token, limit: 50 } }).then((a) => ({ items: a.entries || [], next: a.page_token })),
    [round],
  );
  const again = () => setRound((r) => r + 1);
  let body;
  if (trash.error) body = html`<${Failure} error=${trash.error} what="the trash" />`;
  else if (!trash.done) body = html`<${Loading} what="the trash" />`;
  else
    body = html`<${Table} caption="Dropped objects" empty="Nothing is in the trash."
      columns=${["Object", "Dropped by", "Dropped", "Recoverable until", "Actions"]}
      rows=${trash.items.map((e) => [
        label(e),
        e.dropped_by || "—",
        html`<${Time} ms=${e.dropped_at_ms} />`,
        e.expired ? html`<span class="muted">expired</span>` : html`<${Time} ms=${e.expires_at_ms} />`,
        html`<${Actions} entry=${e} onDone=${again} />`,
      ])} />
      <${MoreButton} paged=${trash} what="entries" />`;
  return html`<${Crumbs} tail="Trash" />
    <h1 id="page-title" tabindex="-1">Trash</h1>
    <p class="muted">Dropped tables and namespaces stay recoverable until their deadline, then are purged.</p>
    ${body}`;
}

