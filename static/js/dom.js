// Small DOM helpers. Untrusted text only ever goes through textContent.
import { _ } from "./i18n.js";

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key === "className") node.className = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// Parse a same-origin HTML fragment that our server rendered (sanitized on the server).
export function parseFragment(html) {
  const template = document.createElement("template");
  template.innerHTML = html; // server-rendered and nh3-sanitized, never raw user text
  return template.content;
}

export function confirmDialog(text, okLabel) {
  const dialog = document.getElementById("confirm-dialog");
  if (!dialog || typeof dialog.showModal !== "function") return Promise.resolve(window.confirm(text));
  dialog.querySelector("#confirm-text").textContent = text;
  dialog.querySelector("#confirm-ok").textContent = okLabel || _("Delete");
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
  });
}

let toastTimer = null;
export function toast(text, { error = false } = {}) {
  let node = document.getElementById("toast");
  if (!node) {
    node = el("p", { id: "toast", className: "toast", role: "status", "aria-live": "polite" });
    document.body.append(node);
  }
  node.textContent = text;
  node.classList.toggle("error", error);
  node.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { node.hidden = true; }, 4000);
}

// A change the page shows only after a reload (an import, a new project) says so on the
// reloaded page: the message waits in sessionStorage, and the reload happens at once, so
// no timer can undo a link the user clicks meanwhile.
const TOAST_AFTER_RELOAD = "toast-after-reload";

export function reloadWithToast(text) {
  sessionStorage.setItem(TOAST_AFTER_RELOAD, text);
  window.location.reload();
}

const pendingToast = sessionStorage.getItem(TOAST_AFTER_RELOAD);
if (pendingToast) {
  sessionStorage.removeItem(TOAST_AFTER_RELOAD);
  toast(pendingToast);
}

export function clearToast() {
  const node = document.getElementById("toast");
  if (node) node.hidden = true;
  clearTimeout(toastTimer);
}

export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const area = el("textarea", { "aria-hidden": "true" });
    area.value = text;
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  toast(_("Copied."));
}
