// Every page: the language switcher, the sidebar drawer, live sidebar updates.
import { el } from "./dom.js";
import { _ } from "./i18n.js";
import { onListEvent } from "./live.js";

const language = document.getElementById("language-select");
if (language) language.addEventListener("change", () => language.form.requestSubmit());

const sidebar = document.getElementById("sidebar");
const toggle = document.querySelector(".sidebar-toggle");
const scrim = document.querySelector(".scrim");

function setDrawer(open) {
  document.body.classList.toggle("drawer-open", open);
  if (toggle) toggle.setAttribute("aria-expanded", String(open));
  if (scrim) scrim.hidden = !open;
  if (open) sidebar?.querySelector("a, button, input")?.focus();
}
toggle?.addEventListener("click", () => setDrawer(!document.body.classList.contains("drawer-open")));
scrim?.addEventListener("click", () => setDrawer(false));
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && document.body.classList.contains("drawer-open")) {
    setDrawer(false);
    toggle?.focus();
  }
});

// --- the sidebar follows changes made elsewhere -----------------------------------------
function projectNames() {
  const data = document.getElementById("projects-data");
  const names = new Map();
  if (data) for (const p of JSON.parse(data.textContent)) names.set(String(p.id), p.name);
  return names;
}

function groupFor(projectId) {
  const key = projectId == null ? "" : String(projectId);
  const groups = document.getElementById("sidebar-groups");
  let group = groups.querySelector(`.sidebar-group[data-project="${CSS.escape(key)}"]`);
  if (!group) {
    const name = key ? projectNames().get(key) || _("Project") : _("No project");
    group = el("section", { className: "sidebar-group", "data-project": key },
      el("h2", { text: name }), el("ul"));
    groups.querySelector(":scope > p.muted")?.remove();
    groups.prepend(group);
  }
  return group;
}

function removeItem(id) {
  const item = sidebar.querySelector(`li[data-id="${CSS.escape(id)}"]`);
  if (!item) return;
  const group = item.closest(".sidebar-group");
  item.remove();
  if (group && !group.querySelector("li")) group.remove();
}

if (sidebar) {
  onListEvent((frame) => {
    if (frame.type === "conversation.deleted") {
      removeItem(frame.conversation_id);
      return;
    }
    const c = frame.conversation;
    if (!c) return;
    if (c.status === "archived") { removeItem(c.id); return; }
    const current = document.getElementById("conversation")?.dataset.id;
    let item = sidebar.querySelector(`li[data-id="${CSS.escape(c.id)}"]`);
    const link = item ? item.querySelector("a") : el("a", { href: `/conversations/${c.id}/` });
    link.textContent = c.title || _("Untitled");
    if (c.id === current) link.setAttribute("aria-current", "page");
    const group = groupFor(c.project_id);
    if (item && item.closest(".sidebar-group") !== group) removeItem(c.id);
    if (!item || !item.isConnected) item = el("li", { "data-id": c.id }, link);
    group.querySelector("ul").prepend(item); // newest activity first
    group.parentElement.prepend(group);
  });
}
