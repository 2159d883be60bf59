// Small shared pieces: loading a call's answer, paged lists, tables,
// times, sizes.
import { html, useCallback, useEffect, useRef, useState } from "./vendor/preact-htm-standalone.module.js";

// Run `load` (an async function) when `deps` change, and again on
// `reload()`; answers [data, error, reload]. A reload keeps what is shown
// until its answer comes (no flicker, a screen reader keeps its place);
// an answer for older deps is dropped.
export function useLoad(load, deps) {
  const [state, setState] = useState({ data: undefined, error: undefined });
  const [tick, setTick] = useState(0);
  const shown = useRef(null);
  const key = JSON.stringify(deps);
  useEffect(() => {
    let live = true;
    if (shown.current !== key) setState({ data: undefined, error: undefined });
    shown.current = key;
    load().then(
      (data) => live && setState({ data, error: undefined }),
      (error) => live && setState({ data: undefined, error }),
    );
    return () => {
      live = false;
    };
  }, [key, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return [state.data, state.error, reload];
}

export function Loading({ what }) {
  return html`<p class="muted">Loading ${what}…</p>`;
}

// A load that failed: said in the page, not as an alert (a page of
// sections the user may not see would otherwise shout over its heading).
export function Failure({ error, what }) {
  const denied = error && error.status === 403;
  return html`<p class="error">${denied ? `You may not see ${what}.` : `Could not load ${what}: ${error.message}`}</p>`;
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
  const d = new Date(ms);
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

// A list the API pages (`page_token`): the first page, then "More". A
// reload keeps the shown items until the new first page comes; answers
// for an older list (another namespace) are dropped.
export function usePaged(fetchPage, deps) {
  const [state, setState] = useState({ items: [], next: undefined, error: undefined, done: false, busy: false });
  const generation = useRef(0);
  const key = JSON.stringify(deps);
  const shown = useRef(null);
  const fetchRef = useRef(fetchPage);
  fetchRef.current = fetchPage;
  const load = (token, reset) => {
    const mine = generation.current;
    setState((s) => ({ ...s, busy: true }));
    fetchRef.current(token).then(
      ({ items, next }) => {
        if (mine !== generation.current) return;
        setState((s) => ({ items: reset ? items : s.items.concat(items), next: next || undefined, error: undefined, done: true, busy: false }));
      },
      (error) => {
        if (mine !== generation.current) return;
        setState((s) => ({ ...s, error, done: true, busy: false }));
      },
    );
  };
  useEffect(() => {
    generation.current += 1;
    if (shown.current !== key) setState({ items: [], next: undefined, error: undefined, done: false, busy: false });
    shown.current = key;
    load(undefined, true);
  }, [key]);
  // Read the first page again, keeping what is shown until it comes.
  const reload = () => {
    generation.current += 1;
    load(undefined, true);
  };
  return { ...state, reload, more: () => !state.busy && load(state.next, false) };
}

export function MoreButton({ paged, what }) {
  if (!paged.next) return null;
  return html`<button type="button" onClick=${paged.more} disabled=${paged.busy}>More ${what}</button>`;
}

// A paged list's states, then its items as `render` shows them (a list by
// default, or whatever `table(items)` makes of them).
export function PagedList({ paged, what, render, table }) {
  if (paged.error) return html`<${Failure} error=${paged.error} what=${what} />`;
  if (!paged.done) return html`<${Loading} what=${what} />`;
  if (table) return html`${table(paged.items)}<${MoreButton} paged=${paged} what=${what} />`;
  if (!paged.items.length) return html`<p class="muted">No ${what}.</p>`;
  return html`<ul class="tree">${paged.items.map((it) => html`<li>${render(it)}</li>`)}</ul>
    <${MoreButton} paged=${paged} what=${what} />`;
}

// The page for an address the console does not know.
export function NotFound() {
  return html`<h1 id="page-title" tabindex="-1">Not found</h1>
    <p>This address names no page of the console. <a href="#/">Go to the estate.</a></p>`;
}
