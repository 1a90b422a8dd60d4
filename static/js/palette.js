// Ctrl K: a command palette. Empty, it offers actions and recent chats; typing filters the
// chats by title at once and searches every message (GET /search/messages, the matches
// marked), a moment after the last key. Arrows move, Enter opens: a message opens in its
// branch (?m=). The All conversations page keeps the full search with its filters.
import { api } from "./api.js";
import { el } from "./dom.js";
import { _, format } from "./i18n.js";

const dialog = document.getElementById("palette");
const input = document.getElementById("palette-input");
const list = document.getElementById("palette-list");
const status = document.getElementById("palette-status");
const SEARCH_AFTER_MS = 120; // after the last key: one search per pause, not per key
const RECENT = 8;
const TITLES = 5;
let searchTimer = null;
let asked = 0; // the latest search: older answers arriving late are dropped
let active = -1;

function chats() {
  return [...document.querySelectorAll("#sidebar-groups li[data-id] > a")]
    .map((a) => ({ title: a.textContent, href: a.getAttribute("href") }));
}

function actions() {
  return [
    { label: _("New chat"), href: "/", kind: "action" },
    { label: _("All conversations"), href: "/conversations/", kind: "action" },
    { label: _("Settings"), href: "/settings/", kind: "action" },
  ];
}

// A search hit's snippet: the server's escaped text with <mark> around the matches. Only
// its text and its marks are kept (never other markup).
function snippet(html) {
  const parsed = new DOMParser().parseFromString(`<p>${html}</p>`, "text/html").body.firstChild;
  const out = el("span", { className: "palette-snippet" });
  for (const node of parsed?.childNodes || []) {
    out.append(node.nodeName === "MARK" ? el("mark", { text: node.textContent }) : node.textContent);
  }
  return out;
}

function option(item, index) {
  const li = el("li", { role: "option", id: `palette-option-${index}`, className: `palette-${item.kind}`,
    "aria-selected": "false" });
  li.dataset.href = item.href;
  li.append(el("span", { className: "palette-label", text: item.label }));
  if (item.snippet) li.append(snippet(item.snippet));
  li.addEventListener("mousedown", (event) => event.preventDefault()); // keep the input focused
  li.addEventListener("click", () => go(li));
  return li;
}

function render(groups) {
  list.replaceChildren();
  let index = 0;
  for (const [title, items] of groups) {
    if (!items.length) continue;
    list.append(el("li", { role: "presentation", className: "palette-group", text: title }));
    for (const item of items) list.append(option(item, index++));
  }
  select(list.querySelector("[role=option]") ? 0 : -1);
}

function options() { return [...list.querySelectorAll("[role=option]")]; }

function select(index) {
  const all = options();
  active = all.length ? (index + all.length) % all.length : -1;
  all.forEach((li, n) => li.setAttribute("aria-selected", String(n === active)));
  const chosen = all[active];
  if (chosen) { input.setAttribute("aria-activedescendant", chosen.id); chosen.scrollIntoView({ block: "nearest" }); }
  else input.removeAttribute("aria-activedescendant");
}

function go(li) {
  if (!li?.dataset.href) return;
  dialog.close();
  location.href = li.dataset.href;
}

function showEmpty() {
  status.textContent = "";
  render([
    [_("Actions"), actions()],
    [_("Recent"), chats().slice(0, RECENT).map((c) => ({ label: c.title, href: c.href, kind: "chat" }))],
  ]);
}

function titled(query) {
  const q = query.toLocaleLowerCase();
  return chats().filter((c) => c.title.toLocaleLowerCase().includes(q)).slice(0, TITLES)
    .map((c) => ({ label: c.title, href: c.href, kind: "chat" }));
}

function everywhere(query) {
  return { label: format(_("Search all messages for “%(q)s”"), { q: query }),
    href: `/conversations/?q=${encodeURIComponent(query)}`, kind: "action" };
}

async function search(query, titles) {
  const mine = ++asked;
  try {
    const page = await api("GET", `/search/messages?q=${encodeURIComponent(query)}&limit=8`);
    if (mine !== asked) return;
    const hits = page.items.map((hit) => ({
      label: hit.conversation_title || _("Untitled"),
      snippet: hit.snippet,
      href: `/conversations/${hit.conversation_id}/?m=${hit.message_id}#msg-${hit.message_id}`,
      kind: "message",
    }));
    status.textContent = hits.length || titles.length ? "" : _("Nothing found.");
    const keep = active;
    render([[_("Conversations"), titles], [_("Messages"), hits], [_("More"), [everywhere(query)]]]);
    if (keep > 0) select(keep);
  } catch (failure) {
    if (mine !== asked) return;
    status.textContent = failure.status === 429 ? _("Searching too fast; wait a moment.") : _("Search is not available right now.");
  }
}

const QUERY_MAX_CHARS = 200; // what GET /search/messages takes

function onInput() {
  const query = input.value.trim().slice(0, QUERY_MAX_CHARS);
  clearTimeout(searchTimer);
  if (!query) { asked++; showEmpty(); return; }
  const titles = titled(query);
  render([[_("Conversations"), titles], [_("More"), [everywhere(query)]]]); // at once
  searchTimer = setTimeout(() => search(query, titles), SEARCH_AFTER_MS);
}

export function openPalette() {
  if (!dialog || dialog.open) return;
  input.value = "";
  showEmpty();
  dialog.showModal();
  input.focus();
}

if (dialog) {
  input.addEventListener("input", onInput);
  input.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown") { event.preventDefault(); select(active + 1); }
    else if (event.key === "ArrowUp") { event.preventDefault(); select(active - 1); }
    else if (event.key === "Enter" && !event.isComposing) { event.preventDefault(); go(options()[active]); }
  });
  dialog.addEventListener("click", (event) => { if (event.target === dialog) dialog.close(); }); // the backdrop
}
