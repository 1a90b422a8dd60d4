// A sidebar row's ⋯ menu (also on right-click, and Shift+F10 / the context-menu key on a
// focused row): rename in place, pin, move to a project (or a new one), archive, delete,
// without opening the conversation. The sidebar's "New project" makes a project.
import { api } from "./api.js";
import { confirmDialog, el, toast } from "./dom.js";
import { _ } from "./i18n.js";
import { share } from "./live.js";
import { chooseProject, newProject } from "./projects.js";
import { known, removeConversation, showConversation } from "./sidebar.js";

const menu = document.getElementById("row-menu");
const groups = document.getElementById("sidebar-groups");
let openFor = null; // the row the menu is open for
let opener = null; // what opened it (focus goes back there)

function items() { return [...menu.querySelectorAll("button[role=menuitem]")]; }

function place(x, y) {
  menu.hidden = false;
  const { width, height } = menu.getBoundingClientRect();
  menu.style.left = `${Math.max(8, Math.min(x, innerWidth - width - 8))}px`;
  menu.style.top = `${Math.max(8, Math.min(y, innerHeight - height - 8))}px`;
}

function open(row, at, from) {
  close();
  openFor = row;
  opener = from;
  const pin = menu.querySelector('[data-action="pin"]');
  pin.querySelector("span").textContent = known(row).pinned ? pin.dataset.unpinLabel : pin.dataset.pinLabel;
  row.classList.add("menu-open");
  row.querySelector(".row-more")?.setAttribute("aria-expanded", "true");
  place(at.x, at.y);
  items()[0].focus();
}

function close({ focus = false } = {}) {
  if (!openFor) return;
  menu.hidden = true;
  openFor.classList.remove("menu-open");
  openFor.querySelector(".row-more")?.setAttribute("aria-expanded", "false");
  if (focus) opener?.focus();
  openFor = null;
}

// Change the conversation; answer whether it was changed (the failure is told).
async function patch(id, body, done) {
  try {
    const conversation = await api("PATCH", `/conversations/${id}`, body);
    showConversation(conversation);
    share({ type: "conversation.updated", conversation }); // other tabs, the open page
    if (done) toast(done);
    return true;
  } catch (failure) {
    toast(failure.message || _("Something went wrong."), { error: true });
    return false;
  }
}

function rename(row) {
  const link = row.querySelector("a");
  const before = link.textContent;
  const input = el("input", { type: "text", className: "row-rename", value: before, maxlength: "200",
    "aria-label": _("New title") });
  link.hidden = true;
  link.after(input);
  input.focus();
  input.select();
  let done = false;
  const finish = async (save) => {
    if (done) return;
    done = true;
    const title = input.value.trim();
    input.remove();
    link.hidden = false;
    if (save && title && title !== before) {
      link.textContent = title;
      if (!await patch(row.dataset.id, { title }, _("Renamed."))) link.textContent = before;
    }
    link.focus();
  };
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") { event.preventDefault(); finish(true); }
    if (event.key === "Escape") { event.preventDefault(); event.stopPropagation(); finish(false); }
  });
  input.addEventListener("blur", () => finish(true));
}

const ACTIONS = {
  rename,
  pin: (row) => patch(row.dataset.id, { pinned: !known(row).pinned }),
  async move(row) {
    const current = known(row).project_id;
    const project = await chooseProject(current == null ? null : Number(current));
    if (project === undefined) return;
    await patch(row.dataset.id, { project_id: project }, _("Moved."));
  },
  archive: (row) => patch(row.dataset.id, { status: "archived" }, _("Conversation archived.")),
  async delete(row) {
    const id = row.dataset.id;
    if (!(await confirmDialog(_("Delete this conversation and all its messages? This cannot be undone."), _("Delete")))) return;
    try {
      await api("DELETE", `/conversations/${id}`);
    } catch (failure) {
      toast(failure.message || _("Something went wrong."), { error: true });
      return;
    }
    removeConversation(id);
    share({ type: "conversation.deleted", conversation_id: id });
    if (document.getElementById("conversation")?.dataset.id === id) location.href = "/";
    else toast(_("Conversation deleted."));
  },
};

if (menu && groups) {
  document.body.append(menu); // not clipped by the drawer (a phone's sidebar slides in)
  groups.addEventListener("click", (event) => {
    const button = event.target.closest(".row-more");
    if (!button) return;
    event.preventDefault();
    const row = button.closest("li[data-id]");
    if (openFor === row) { close({ focus: true }); return; }
    const box = button.getBoundingClientRect();
    open(row, { x: box.left, y: box.bottom + 4 }, button);
  });
  groups.addEventListener("contextmenu", (event) => {
    const row = event.target.closest("li[data-id]");
    if (!row || event.target.closest("input")) return;
    event.preventDefault();
    open(row, { x: event.clientX, y: event.clientY }, row.querySelector("a"));
  });
  groups.addEventListener("keydown", (event) => {
    const row = event.target.closest("li[data-id]");
    if (!row || event.target.closest("input")) return;
    if (event.key === "ContextMenu" || (event.shiftKey && event.key === "F10")) {
      event.preventDefault();
      const box = event.target.getBoundingClientRect();
      open(row, { x: box.left + 16, y: box.bottom }, event.target);
    }
  });
  menu.addEventListener("click", (event) => {
    const item = event.target.closest("button[data-action]");
    if (!item || !openFor) return;
    const row = openFor;
    close();
    ACTIONS[item.dataset.action](row);
  });
  menu.addEventListener("keydown", (event) => {
    const all = items();
    const at = all.indexOf(document.activeElement);
    const next = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: all.length - 1 }[event.key];
    if (next !== undefined) { event.preventDefault(); all[(next + all.length) % all.length].focus(); }
    if (event.key === "Escape") { event.preventDefault(); event.stopPropagation(); close({ focus: true }); }
    if (event.key === "Tab") close();
  });
  document.addEventListener("click", (event) => {
    if (openFor && !menu.contains(event.target) && !event.target.closest(".row-more")) close();
  });
  addEventListener("resize", () => close());
  groups.addEventListener("scroll", () => close(), { passive: true });
}

document.getElementById("new-project")?.addEventListener("click", async () => {
  const project = await newProject();
  if (project !== undefined) toast(_("Project created."));
});
