// Trash: what is recoverable and until when; undrop and purge where the
// server allows it, each confirmed first.
import { html, useEffect, useRef, useState } from "../vendor/preact-htm-standalone.module.js";
import { api, idPath, pages } from "../api.js";
import { announce } from "../announce.js";
import { Crumbs } from "../crumbs.js";
import { PagedList, Table, Time, usePaged } from "../ui.js";

const label = (e) => `${e.kind} ${(e.id || []).join(".")}`;

// The question, with the focus on its safe answer: Enter after Undrop
// restores (nothing is lost), Enter after Purge cancels.
function Confirm({ what, entry, onConfirm, onCancel }) {
  const confirm = useRef(null);
  const cancel = useRef(null);
  useEffect(() => {
    const target = what === "undrop" ? confirm : cancel;
    if (target.current) target.current.focus();
  }, []);
  const verb = what === "undrop" ? "Restore" : "Purge";
  return html`<div class="confirm" role="group" aria-label=${`Confirm: ${verb.toLowerCase()} ${label(entry)}`}>
    <span>${verb} ${label(entry)}${what === "purge" ? " for good" : ""}?</span>
    <button type="button" ref=${confirm} onClick=${onConfirm}>${`Confirm ${what}`}</button>
    <button type="button" ref=${cancel} onClick=${onCancel}>Cancel</button>
  </div>`;
}

async function perform(what, entry) {
  if (what === "undrop") {
    const kind = entry.kind === "namespace" ? "namespace" : "table";
    await api("POST", `/v1/${kind}/${idPath(entry.id)}/undrop`, {
      body: { trash_id: entry.trash_id, ...(kind === "namespace" ? { warehouse_id: entry.warehouse } : {}) },
    });
    return `${label(entry)} was restored.`;
  }
  await api("DELETE", `/v1/trash/${encodeURIComponent(entry.trash_id)}`, { query: { warehouse_id: entry.warehouse } });
  return `${label(entry)} was purged for good.`;
}

function Actions({ entry, onDone }) {
  const [asking, setAsking] = useState(null);
  const [error, setError] = useState("");
  const asked = useRef(null);
  const back = useRef(false);
  // After a cancel or a failure the focus returns to the button asked.
  useEffect(() => {
    if (!asking && back.current && asked.current) asked.current.focus();
    back.current = false;
  }, [asking]);
  const run = async (what) => {
    setError("");
    try {
      announce(await perform(what, entry));
      setAsking(null);
      onDone();
    } catch (e) {
      const said = e.status === 403 ? `You may not ${what} ${label(entry)}.` : `Could not ${what} ${label(entry)}: ${e.message}`;
      setError(said);
      announce(said);
      back.current = true;
      setAsking(null);
    }
  };
  const ask = (what) => (e) => {
    asked.current = e.currentTarget;
    setAsking(what);
  };
  if (asking) {
    const cancel = () => {
      back.current = true;
      setAsking(null);
    };
    return html`<${Confirm} what=${asking} entry=${entry} onConfirm=${() => run(asking)} onCancel=${cancel} />`;
  }
  return html`<span class="actions">
    ${!entry.expired && html`<button type="button" onClick=${ask("undrop")} aria-label=${`Undrop ${label(entry)}`}>Undrop</button>`}
    <button type="button" onClick=${ask("purge")} aria-label=${`Purge ${label(entry)}`}>Purge</button>
    ${error && html`<span class="error" role="alert">${error}</span>`}
  </span>`;
}

export function Trash() {
  const trash = usePaged(pages("/v1/trash", "entries"), []);
  const again = () => {
    trash.reload();
    // The row acted on is gone: the heading holds the focus meanwhile.
    document.getElementById("page-title")?.focus();
  };
  return html`<${Crumbs} tail="Trash" />
    <h1 id="page-title" tabindex="-1">Trash</h1>
    <p class="muted">Dropped tables and namespaces stay recoverable until their deadline, then are purged.</p>
    <${PagedList} paged=${trash} what="the trash" table=${(items) => html`<${Table} caption="Dropped objects" empty="Nothing is in the trash."
      columns=${["Object", "Dropped by", "Dropped", "Recoverable until", "Actions"]}
      rows=${items.map((e) => [
        label(e),
        e.dropped_by || "—",
        html`<${Time} ms=${e.dropped_at_ms} />`,
        e.expired ? html`<span class="muted">expired</span>` : html`<${Time} ms=${e.expires_at_ms} />`,
        html`<${Actions} key=${e.trash_id} entry=${e} onDone=${again} />`,
      ])} />`} />`;
}
