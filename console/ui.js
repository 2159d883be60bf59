// Small shared pieces: loading a call's answer, tables, times, sizes.
import { html, useEffect, useState, useCallback } from "./vendor/preact-htm-standalone.module.js";

// Run `load` (an async function) when `deps` change; answers
// [data, error, reload].
export function useLoad(load, deps) {
  const [state, setState] = useState({ data: undefined, error: undefined });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState({ data: undefined, error: undefined });
    load().then(
      (data) => live && setState({ data, error: undefined }),
      (error) => live && setState({ data: undefined, error }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return [state.data, state.error, reload];
}

export function Loading({ what }) {
  return html`<p class="muted">Loading ${what}…</p>`;
}

export function Failure({ error, what }) {
  const denied = error && error.status === 403;
  return html`<p class="error" role="alert">
    ${denied ? `You may not see ${what}.` : `Could not load ${what}: ${error.message}`}
  </p>`;
}

// Load, then render `children(data)`; the states in between said plainly.
export function Loaded({ data, error, what, children }) {
  if (error) return html`<${Failure} error=${error} what=${what} />`;
  if (data === undefined) return html`<${Loading} what=${what} />`;
  return children(data);
}

// A table with a caption and column headers; `rows` are arrays of cells.
export function Table({ caption, columns, rows, empty }) {
  if (!rows.length) return html`<p class="muted">${empty || `No ${caption.toLowerCase()}.`}</p>`;
  return html`<table>
    <caption>${caption}</caption>
    <thead><tr>${columns.map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
    <tbody>${rows.map((r) => html`<tr>${r.map((cell) => html`<td>${cell}</td>`)}</tr>`)}</tbody>
  </table>`;
}

export function Time({ ms }) {
  if (ms === undefined || ms === null || ms === "") return html`<span class="muted">—</span>`;
  const d = typeof ms === "number" ? new Date(ms) : new Date(ms);
  if (Number.isNaN(d.getTime())) return html`<span>${String(ms)}</span>`;
  return html`<time datetime=${d.toISOString()}>${d.toLocaleString()}</time>`;
}

export function bytes(n) {
  if (n === undefined || n === null) return "—";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = Number(n);
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${i ? v.toFixed(1) : v} ${units[i]}`;
}

// A list the API pages (`page_token`): the first page, then "More".
export function usePaged(fetchPage, deps) {
  const [items, setItems] = useState([]);
  const [next, setNext] = useState(undefined);
  const [error, setError] = useState(undefined);
  const [done, setDone] = useState(false);
  const more = useCallback(
    (token, reset) =>
      fetchPage(token).then(
        ({ items: got, next: following }) => {
          setItems((had) => (reset ? got : had.concat(got)));
          setNext(following || undefined);
          setDone(true);
        },
        (e) => {
          setError(e);
          setDone(true);
        },
      ),
    deps,
  );
  useEffect(() => {
    setItems([]);
    setNext(undefined);
    setError(undefined);
    setDone(false);
    more(undefined, true);
  }, deps);
  return { items, next, error, done, more: () => more(next, false) };
}

export function MoreButton({ paged, what }) {
  if (!paged.next) return null;
  return html`<button type="button" onClick=${paged.more}>More ${what}</button>`;
}
