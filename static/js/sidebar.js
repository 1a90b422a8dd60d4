// The sidebar's list: pinned, project folders, today's group. It follows changes made here
// (a row's ⋯ menu) and elsewhere (other tabs, other devices: live.js), and keeps each
// folder's count true.
import { el } from "./dom.js";
import { _, format } from "./i18n.js";
import { onProjectCreated } from "./projects.js";

const sidebar = document.getElementById("sidebar");
const groups = document.getElementById("sidebar-groups");

export function rowOf(id) {
  return groups?.querySelector(`li[data-id="${CSS.escape(id)}"]`) || null;
}

// What a row knows of its conversation (a frame may carry only some fields).
export function known(row) {
  return {
    id: row.dataset.id,
    title: row.querySelector("a").textContent,
    pinned: Boolean(row.closest('[data-group="pinned"]')),
    project_id: row.dataset.project ?? null,
  };
}

function moreButton(title) {
  const button = document.getElementById("row-more-template").content.firstElementChild.cloneNode(true);
  button.setAttribute("aria-label", format(_("Options for %(title)s"), { title }));
  return button;
}

function item(c) {
  const current = document.getElementById("conversation")?.dataset.id;
  const title = c.title || _("Untitled");
  const link = el("a", { href: `/conversations/${c.id}/`, text: title });
  if (c.id === current) link.setAttribute("aria-current", "page");
  const row = el("li", { "data-id": c.id }, link, moreButton(title));
  if (c.project_id != null) row.dataset.project = String(c.project_id);
  return row;
}

function folder(projectId) {
  return groups.querySelector(`.project-folder[data-project="${CSS.escape(String(projectId))}"]`);
}

// The list a conversation belongs in: pinned, its project's folder, or today's group.
function listFor(c) {
  if (c.pinned) {
    const pinned = groups.querySelector('[data-group="pinned"]');
    pinned.hidden = false;
    return pinned.querySelector("ul");
  }
  if (c.project_id != null && folder(c.project_id)) return folder(c.project_id).querySelector("ul");
  let today = groups.querySelector('[data-group="today"]');
  if (!today) {
    today = el("section", { className: "sidebar-group", "data-group": "today" },
      el("h2", { text: _("Today") }), el("ul"));
    groups.querySelector('[data-group="projects"]').after(today);
  }
  return today.querySelector("ul");
}

export function removeConversation(id) {
  const found = rowOf(id);
  if (!found) return;
  const group = found.closest(".sidebar-group:not(.projects-group)");
  found.remove();
  if (group && !group.querySelector("li")) {
    if (group.dataset.group === "pinned") group.hidden = true;
    else group.remove();
  }
  refresh();
}

// Show a conversation as `c` says (only some fields: the rest as the row knew them).
export function showConversation(c) {
  if (!groups || !c?.id) return;
  if (c.status === "archived" || c.temporary) { removeConversation(c.id); return; }
  const existing = rowOf(c.id);
  const merged = { ...(existing ? known(existing) : {}), ...c };
  if (!c.title && existing && !("title" in c)) merged.title = known(existing).title;
  removeConversation(c.id);
  listFor(merged).prepend(item(merged)); // newest activity first
  refresh();
}

// Each folder counts its project's conversations, the pinned ones (listed under Pinned) too.
function refresh() {
  for (const f of groups.querySelectorAll(".project-folder")) {
    const rows = groups.querySelectorAll(`li[data-project="${CSS.escape(f.dataset.project)}"]`).length;
    f.querySelector(".count").textContent = String(rows);
    const ul = f.querySelector("ul");
    ul.querySelector("li.empty")?.remove();
    if (!ul.querySelector("li[data-id]")) { // nothing listed here: none, or all pinned
      ul.append(el("li", { className: "muted empty", text: rows ? _("Pinned, above.") : _("No conversations yet.") }));
    }
  }
  const none = sidebar.querySelector(".sidebar-empty");
  if (none) none.hidden = Boolean(groups.querySelector("li[data-id]"));
}

// A project made here appears as its (empty) folder at once, in name order.
onProjectCreated((project) => {
  if (!groups || folder(project.id)) return;
  const icon = document.getElementById("folder-icon-template").content.firstElementChild.cloneNode(true);
  const made = el("details", { className: "project-folder", "data-project": String(project.id) },
    el("summary", {}, icon, el("span", { text: project.name }), el("span", { className: "count", text: "0" })),
    el("ul"));
  const section = groups.querySelector('[data-group="projects"]');
  const after = [...section.querySelectorAll(".project-folder")]
    .find((f) => f.querySelector("summary span").textContent.localeCompare(project.name) > 0);
  if (after) after.before(made); else section.append(made);
  refresh();
});
