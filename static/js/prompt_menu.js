// Saved prompts in the message box: "/" at the start lists them (filtered as you type;
// arrows, Enter or Tab, Escape), and a prompt with {{variables}} asks for them in a small
// form before its text goes into the box. A combobox in the ARIA sense.
import { api } from "./api.js";
import { el } from "./dom.js";
import { _, format } from "./i18n.js";

const TYPED = /^\/([a-z0-9-]{0,32})$/;
const VARIABLE = /\{\{\s*([\p{L}\p{N}_-]{1,40})\s*\}\}/gu;
const STALE_MS = 60_000;

export function fillVariables(text, values) {
  return text.replace(VARIABLE, (whole, name) => (name in values ? values[name] : whole));
}

export function initPromptMenu({ input, setText }) {
  const menu = document.getElementById("prompt-menu");
  const dialog = document.getElementById("prompt-variables");
  if (!menu || !dialog) return;
  let prompts = null;
  let fetchedAt = 0;
  let loading = null;
  let shown = [];
  let active = -1;

  input.setAttribute("role", "combobox");
  input.setAttribute("aria-controls", "prompt-menu");
  input.setAttribute("aria-autocomplete", "list");
  input.setAttribute("aria-expanded", "false");

  async function load() {
    if (prompts && Date.now() - fetchedAt < STALE_MS) return prompts;
    loading ||= api("GET", "/prompts")
      .then((page) => { prompts = page.items; fetchedAt = Date.now(); return prompts; })
      .catch(() => prompts || [])
      .finally(() => { loading = null; });
    return loading;
  }

  function close() {
    menu.hidden = true;
    shown = [];
    active = -1;
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
  }

  function highlight(index) {
    active = index;
    for (const [i, item] of [...menu.children].entries()) item.setAttribute("aria-selected", String(i === index));
    const item = menu.children[index];
    if (item?.id) {
      input.setAttribute("aria-activedescendant", item.id);
      item.scrollIntoView({ block: "nearest" });
    }
  }

  async function update() {
    const typed = TYPED.exec(input.value);
    if (!typed) { close(); return; }
    const all = await load();
    if (!TYPED.test(input.value)) { close(); return; } // typed on while the list came
    const word = typed[1];
    shown = all.filter((p) => p.command.startsWith(word) || (word && p.title.toLowerCase().includes(word)));
    const items = shown.map((p, i) => el("li", { id: `prompt-option-${i}`, role: "option", "aria-selected": "false", "data-index": i },
      el("span", { className: "prompt-command", text: `/${p.command}` }),
      el("span", { className: "prompt-title", text: p.title }),
      p.owner_is_me ? null : el("span", { className: "badge", text: _("shared") })));
    if (!items.length) {
      items.push(el("li", { className: "muted prompt-empty", role: "presentation",
        text: all.length ? _("No prompt starts with that.") : _("No saved prompts yet: add them on the Prompts page.") }));
    }
    menu.replaceChildren(...items);
    menu.hidden = false;
    input.setAttribute("aria-expanded", "true");
    highlight(shown.length ? 0 : -1);
  }

  function pick(prompt) {
    close();
    const names = [...new Set([...prompt.content.matchAll(VARIABLE)].map((m) => m[1]))];
    if (!names.length) { insert(prompt.content); return; }
    askFor(prompt, names);
  }

  function insert(text) {
    setText(text);
    input.focus();
    input.setSelectionRange(text.length, text.length);
  }

  function askFor(prompt, names) {
    const form = dialog.querySelector("form");
    document.getElementById("prompt-variables-title").textContent = format(_("Fill in /%(command)s"), { command: prompt.command });
    const fields = document.getElementById("prompt-variables-fields");
    fields.replaceChildren(...names.map((name, i) => {
      const id = `prompt-var-${i}`;
      return el("div", { className: "field" },
        el("label", { for: id, text: name }),
        el("textarea", { id, name, rows: "1", required: true, "data-variable": name }));
    }));
    form.onsubmit = (event) => {
      event.preventDefault();
      const values = {};
      for (const field of fields.querySelectorAll("[data-variable]")) values[field.dataset.variable] = field.value;
      dialog.close();
      insert(fillVariables(prompt.content, values));
    };
    // Enter goes to the next field and, from the last, inserts (as Enter sends from the
    // composer); Shift+Enter starts a new line in a value. Not while an IME is composing.
    fields.onkeydown = (event) => {
      if (event.key !== "Enter" || event.shiftKey || event.isComposing || event.keyCode === 229) return;
      event.preventDefault();
      const all = [...fields.querySelectorAll("textarea")];
      const next = all[all.indexOf(event.target) + 1];
      if (next) next.focus();
      else form.requestSubmit();
    };
    dialog.showModal();
    fields.querySelector("textarea")?.focus();
  }

  input.addEventListener("input", update);
  input.addEventListener("blur", () => setTimeout(close, 150));
  // Registered before the composer's own keys: Enter picks here instead of sending.
  input.addEventListener("keydown", (event) => {
    if (menu.hidden) return;
    const count = shown.length;
    if (event.key === "ArrowDown" && count) highlight((active + 1) % count);
    else if (event.key === "ArrowUp" && count) highlight((active - 1 + count) % count);
    else if ((event.key === "Enter" || event.key === "Tab") && !event.shiftKey && !event.isComposing && active >= 0) pick(shown[active]);
    else if (event.key === "Escape") close();
    else return;
    event.preventDefault();
    event.stopImmediatePropagation();
  });
  menu.addEventListener("mousedown", (event) => event.preventDefault()); // keep the focus
  menu.addEventListener("click", (event) => {
    const item = event.target.closest("[data-index]");
    if (item) pick(shown[Number(item.dataset.index)]);
  });
  dialog.querySelector("[data-cancel]")?.addEventListener("click", () => { dialog.close(); input.focus(); });
}
