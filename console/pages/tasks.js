// A table's maintenance tasks and their status; submit a compaction and
// watch it finish (the list is read again every few seconds while a task
// is unfinished).
import { html, useEffect, useState } from "../vendor/preact-htm-standalone.module.js";
import { api, idPath } from "../api.js";
import { announce } from "../announce.js";
import { Crumbs } from "../crumbs.js";
import { Failure, Loading, Table, Time, useLoad } from "../ui.js";

const TYPES = ["lance_compact", "lance_scalar_index", "lance_vector_index", "lance_optimize_indices", "lance_cleanup"];
const stamp = (s) => (s ? Date.parse(s) : undefined);

async function allTasks(path) {
  const lists = await Promise.all(
    TYPES.map((t) => api("GET", `${path}/tasks`, { query: { task_type: t, max_results: 100 } }).then((a) => a.tasks || [])),
  );
  return lists.flat().sort((a, b) => (stamp(b.created_at) || 0) - (stamp(a.created_at) || 0));
}

export function Tasks({ id, query }) {
  const parts = id.split("$");
  const path = `/lance/oss/v1/table/${idPath(parts)}`;
  const [tasks, error, reload] = useLoad(() => allTasks(path), [id]);
  const [busy, setBusy] = useState(false);
  const [said, setSaid] = useState("");
  const [refused, setRefused] = useState("");
  const unfinished = (tasks || []).some((t) => t.status === "submitted" || t.status === "running");
  useEffect(() => {
    if (!unfinished) return undefined;
    const t = setTimeout(reload, 1500);
    return () => clearTimeout(t);
  }, [tasks]);
  useEffect(() => {
    if (!said || !tasks) return;
    const task = tasks.find((t) => t.task_id === said);
    if (task && (task.status === "completed" || task.status === "failed")) {
      announce(`Compaction ${task.status}.`);
      setSaid("");
    }
  }, [tasks]);
  const compact = async () => {
    setBusy(true);
    setRefused("");
    try {
      const { task_id } = await api("POST", `${path}/compact`, { body: {} });
      setSaid(task_id);
      announce("Compaction submitted.");
      reload();
    } catch (e) {
      setRefused(e.status === 403 ? "You may not submit a compaction on this table." : `The compaction was not submitted: ${e.message}`);
    } finally {
      setBusy(false);
    }
  };
  let body;
  if (error) body = html`<${Failure} error=${error} what="the tasks" />`;
  else if (!tasks) body = html`<${Loading} what="the tasks" />`;
  else
    body = html`<${Table} caption="Tasks (newest first)" empty="No maintenance tasks yet."
      columns=${["Task", "Type", "Status", "Submitted", "Finished", "Outcome"]}
      rows=${tasks.map((t) => [
        html`<code>${t.task_id}</code>`,
        t.task_type,
        html`<span class=${`status ${t.status}`}>${t.status}</span>`,
        html`<${Time} ms=${stamp(t.created_at)} />`,
        html`<${Time} ms=${stamp(t.completed_at)} />`,
        t.error ? `${t.error.error}: ${t.error.detail}` : outcome(t.result),
      ])} />`;
  return html`<${Crumbs} query=${query} parts=${parts} table=${true} tail="Tasks" />
    <h1 id="page-title" tabindex="-1">Tasks of ${parts.join(".")}</h1>
    <p><button type="button" onClick=${compact} disabled=${busy}>Submit a compaction</button>
      ${refused && html` <span class="error" role="alert">${refused}</span>`}</p>
    ${body}`;
}

function outcome(r) {
  if (!r) return "";
  if (r.fragments_before !== undefined) return `fragments ${r.fragments_before} → ${r.fragments_after} (${r.executor || "in_process"})`;
  if (r.index_name) return `index ${r.index_name}`;
  return r.executor ? `ran ${r.executor}` : "";
}
