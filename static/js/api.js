// The JSON API client (SPEC: /api/v1/): session cookie + CSRF header, errors as ApiError.
import { _ } from "./i18n.js";

const BASE = "/api/v1";

export class ApiError extends Error {
  constructor(status, code, message, detail = {}) {
    super(message || code || `HTTP ${status}`);
    this.status = status;
    this.code = code;
    this.detail = detail; // the whole error object (e.g. `findings` of a sensitive message)
  }
}

// fetch, with no answer at all (offline, the server down) as an ApiError a person can read:
// the browser's own words ("Failed to fetch") are neither helpful nor translated.
async function reach(url, init) {
  try {
    return await fetch(url, init);
  } catch (failure) {
    if (failure.name === "AbortError") throw failure;
    throw new ApiError(0, "unreachable", _("Could not reach the server. Check your connection and try again."));
  }
}

export function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  if (meta && meta.content) return meta.content;
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

export async function api(method, path, body) {
  const init = {
    method,
    credentials: "same-origin",
    headers: { Accept: "application/json", "X-CSRFToken": csrfToken() },
  };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await reach(BASE + path, init);
  if (response.status === 204) return null;
  let data = null;
  const type = response.headers.get("Content-Type") || "";
  if (type.includes("json")) data = await response.json();
  if (!response.ok) {
    const error = (data && data.error) || {};
    throw new ApiError(response.status, error.code, error.message, error);
  }
  return data;
}

// POST a file as multipart field `file`; answer the JSON (errors as ApiError).
export async function upload(path, file) {
  const body = new FormData();
  body.append("file", file);
  const response = await reach(BASE + path, {
    method: "POST",
    credentials: "same-origin",
    headers: { Accept: "application/json", "X-CSRFToken": csrfToken() },
    body,
  });
  let data = null;
  try { data = await response.json(); } catch { /* not JSON */ }
  if (!response.ok) {
    const error = (data && data.error) || {};
    throw new ApiError(response.status, error.code, error.message);
  }
  return data;
}

// POST and download the answer as a file (for exports that answer with a body).
export async function download(method, path, body, fallbackName) {
  const response = await reach(BASE + path, {
    method,
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) {
    let error = {};
    try { error = (await response.json()).error || {}; } catch { /* not JSON */ }
    throw new ApiError(response.status, error.code, error.message);
  }
  const disposition = response.headers.get("Content-Disposition") || "";
  const match = disposition.match(/filename\*?=(?:UTF-8'')?"?([^";]+)"?/i);
  const name = match ? decodeURIComponent(match[1]) : fallbackName;
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export async function fetchHtml(url) {
  const response = await reach(url, { credentials: "same-origin", headers: { Accept: "text/html" } });
  if (!response.ok) throw new ApiError(response.status, "http", `HTTP ${response.status}`);
  return response;
}
