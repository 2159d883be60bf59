// Calls to the catalog's own REST routes, same origin, with the signed-in
// user's credential: every grant, policy and audit event applies as it
// does to any client. The credential lives in sessionStorage only (this
// tab), and is dropped on sign-out and on any 401.

// The console is served at <prefix>/console/; the API at <prefix>/.
const BASE = new URL("../", location.href);
const KEY = "lance-catalog.credential";

export const session = {
  get: () => sessionStorage.getItem(KEY),
  set: (value) => sessionStorage.setItem(KEY, value),
  clear: () => sessionStorage.removeItem(KEY),
};

export class ApiError extends Error {
  constructor(status, body) {
    const detail = body && typeof body === "object" ? body.detail || body.title || body.message : body;
    super(detail ? `${status}: ${detail}` : `the server answered ${status}`);
    this.status = status;
    this.body = body;
  }
}

function url(path, query) {
  const u = new URL(path.replace(/^\//, ""), BASE);
  for (const [k, v] of Object.entries(query || {})) {
    if (v === undefined || v === null || v === "") continue;
    for (const one of Array.isArray(v) ? v : [v]) u.searchParams.append(k, String(one));
  }
  return u;
}

// An answer's body: its JSON, or its text when it is not JSON.
async function body(answer) {
  const text = await answer.text();
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}

// `authorization`: sent instead of the kept credential (a sign-in's).
export async function api(method, path, { query, body: sent, authorization } = {}) {
  const headers = { accept: "application/json" };
  const credential = authorization ? null : session.get();
  if (authorization) headers.authorization = authorization;
  else if (credential) headers.authorization = `Bearer ${credential}`;
  if (sent !== undefined) headers["content-type"] = "application/json";
  const answer = await fetch(url(path, query), {
    method,
    headers,
    body: sent === undefined ? undefined : JSON.stringify(sent),
    credentials: "omit",
    cache: "no-store",
  });
  const data = await body(answer);
  if (answer.status === 401 && credential) {
    session.clear();
    window.dispatchEvent(new Event("lance-catalog:signed-out"));
  }
  if (!answer.ok) throw new ApiError(answer.status, data);
  return data;
}

// Sign in as a local user: the name and password go once, as HTTP Basic,
// to POST /v1/sessions, and only the session token it answers is kept.
export async function signInWithPassword(username, password) {
  const bytes = new TextEncoder().encode(`${username}:${password}`);
  const basic = btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(""));
  const made = await api("POST", "/v1/sessions", { body: {}, authorization: `Basic ${basic}` });
  session.set(made.token);
  return made;
}

// An object id as the API's paths take it: its parts joined by `$`.
export const idPath = (parts) => parts.map(encodeURIComponent).join("$");

// One page of a list the API pages with `page_token` and `limit`: the
// items under `key` and the next page's token.
export const pages = (path, key, query, limit = 50) => (token) =>
  api("GET", path, { query: { ...query, page_token: token, limit } }).then((a) => ({
    items: a[key] || [],
    next: a.page_token,
  }));
