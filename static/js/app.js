// Every page: the shell (sidebar drawer, menus, dialogs, shortcuts, banners) and the live sidebar.
import { localizeTimes } from "./i18n.js";
import { onListEvent } from "./live.js";
import { openPalette } from "./palette.js";
import "./row_menu.js";
import { removeConversation, showConversation } from "./sidebar.js";

// One date format on every screen: each <time> in the reader's language and time zone,
// also those a fragment or a live frame adds later.
localizeTimes(document);
new MutationObserver((changes) => {
  for (const change of changes) for (const node of change.addedNodes) if (node.nodeType === 1) localizeTimes(node);
}).observe(document.body, { childList: true, subtree: true });

for (const language of document.querySelectorAll("#language-select")) {
  language.addEventListener("change", () => language.form.requestSubmit());
}

const body = document.body;
const sidebar = document.getElementById("sidebar");
const toggle = document.querySelector(".sidebar-toggle");
const scrim = document.querySelector(".scrim");
const phone = window.matchMedia("(max-width: 860px)");

// --- the sidebar: a drawer on a phone, a column that can be hidden on a desktop -------------
function setDrawer(open) {
  body.classList.toggle("drawer-open", open);
  if (toggle) toggle.setAttribute("aria-expanded", String(open));
  if (scrim) scrim.hidden = !open;
  if (open) sidebar?.querySelector("a, button, input")?.focus();
}
function toggleSidebar() {
  if (!sidebar) return;
  if (phone.matches) { setDrawer(!body.classList.contains("drawer-open")); return; }
  const hidden = body.classList.toggle("sidebar-hidden");
  localStorage.setItem("chat.sidebar-hidden", hidden ? "1" : "");
  toggle?.setAttribute("aria-expanded", String(!hidden));
}
if (localStorage.getItem("chat.sidebar-hidden") === "1") body.classList.add("sidebar-hidden");
toggle?.addEventListener("click", toggleSidebar);
scrim?.addEventListener("click", () => setDrawer(false));
document.querySelector(".sidebar-close")?.addEventListener("click", () => { setDrawer(false); toggle?.focus(); });

// --- menus (<details class="menu">) and dialogs ---------------------------------------------
function closeMenus(except) {
  for (const menu of document.querySelectorAll("details.menu[open]")) if (menu !== except) menu.open = false;
}
document.addEventListener("click", (event) => {
  const menu = event.target.closest("details.menu");
  closeMenus(menu);
  // A chosen item closes its menu (a summary click only toggles it).
  if (menu && event.target.closest(".menu-items button, .menu-items a")) menu.open = false;
  const opener = event.target.closest("[data-open-dialog]");
  if (opener) document.getElementById(opener.dataset.openDialog)?.showModal();
  const closer = event.target.closest("[data-close-dialog]");
  if (closer) closer.closest("dialog")?.close();
});
document.addEventListener("toggle", (event) => {
  const menu = event.target;
  if (!menu.matches?.("details.menu") || !menu.open) return;
  menu.querySelector(".menu-items button:not(:disabled), .menu-items a, .menu-items select")?.focus();
}, true);
// Arrow keys move between a menu's items.
document.addEventListener("keydown", (event) => {
  const menu = event.target.closest?.("details.menu[open]");
  if (!menu || !["ArrowDown", "ArrowUp", "Home", "End"].includes(event.key)) return;
  const items = [...menu.querySelectorAll(".menu-items button:not(:disabled), .menu-items a")];
  if (!items.length) return;
  event.preventDefault();
  const at = items.indexOf(document.activeElement);
  const next = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: items.length - 1 }[event.key];
  items[(next + items.length) % items.length].focus();
});

// --- banners that can be dismissed stay dismissed -------------------------------------------
for (const banner of document.querySelectorAll("[data-dismiss-key]")) {
  const key = `chat.dismissed.${banner.dataset.dismissKey}`;
  banner.hidden = localStorage.getItem(key) === "1";
  banner.querySelector(".dismiss")?.addEventListener("click", () => {
    localStorage.setItem(key, "1");
    banner.hidden = true;
  });
}

// --- keyboard shortcuts (listed in the ? dialog) ---------------------------------------------
function typing(target) {
  return target.closest?.("input, textarea, select, [contenteditable=true]");
}
document.addEventListener("keydown", (event) => {
  const mod = event.ctrlKey || event.metaKey;
  const key = event.key.toLowerCase();
  if (event.key === "Escape") {
    const open = document.querySelector("details.menu[open]");
    if (open) { open.open = false; open.querySelector("summary")?.focus(); event.preventDefault(); return; }
    if (body.classList.contains("drawer-open")) { setDrawer(false); toggle?.focus(); return; }
    if (event.shiftKey) { document.getElementById("composer-input")?.focus(); event.preventDefault(); }
    return;
  }
  if (mod && event.shiftKey && key === "o") { event.preventDefault(); location.href = "/"; return; }
  if (mod && event.shiftKey && key === "s") { event.preventDefault(); toggleSidebar(); return; }
  if (mod && !event.shiftKey && key === "k") {
    if (!document.getElementById("palette")) return;
    event.preventDefault();
    openPalette();
    return;
  }
  if (event.key === "?" && !mod && !typing(event.target) && !document.querySelector("dialog[open]")) {
    document.getElementById("shortcuts-dialog")?.showModal();
  }
});

// --- the sidebar follows changes made elsewhere (sidebar.js); each row has a ⋯ menu ----------
if (sidebar) {
  onListEvent((frame) => {
    if (frame.type === "conversation.deleted") removeConversation(frame.conversation_id);
    else showConversation(frame.conversation);
  });
}

// A click or tap on the sidebar's search field opens the palette too (from the keyboard,
// and without scripts, the field's form searches on the All conversations page).
document.getElementById("sidebar-q")?.addEventListener("pointerdown", (event) => {
  event.preventDefault();
  if (phone.matches) setDrawer(false);
  openPalette();
});
