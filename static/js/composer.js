// The message box, shared by a new chat and a conversation: autosize, Enter sends (on a touch
// screen Return is a new line and the button sends), files (picked, dropped or pasted), and
// the sensitive-information panel.
import { upload } from "./api.js";
import { el, toast } from "./dom.js";
import { _, format } from "./i18n.js";
import { initDictation } from "./dictation.js";
import { initPromptMenu } from "./prompt_menu.js";

export function newClientId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return `c-${Date.now()}-${Math.random().toString(36).slice(2)}`;
}

function formatSize(bytes) {
  return bytes < 1024 * 1024 ? `${Math.max(1, Math.round(bytes / 1024))} KB` : `${(bytes / 1048576).toFixed(1)} MB`;
}

const KIND_TEXT = {
  rrn: () => _("resident registration number"),
  arc: () => _("alien registration number"),
  phone: () => _("phone number"),
  card: () => _("card number"),
  bank_account: () => _("bank account number"),
  email: () => _("e-mail address"),
  passport: () => _("passport number"),
  secret: () => _("password or secret key"),
};
const kindText = (kind) => (KIND_TEXT[kind] || (() => kind))();

// Offsets are code points (the server counts characters), not UTF-16 units.
function spans(text, findings) {
  const chars = Array.from(text);
  const parts = [];
  let last = 0;
  for (const f of [...findings].sort((a, b) => a.start - b.start)) {
    parts.push({ text: chars.slice(last, f.start).join("") });
    parts.push({ text: chars.slice(f.start, f.end).join(""), kind: f.kind });
    last = f.end;
  }
  parts.push({ text: chars.slice(last).join("") });
  return parts;
}

/**
 * Wire the composer form. `uploadPath()` names where files go (null: keep them until
 * `uploadAll(path)`); `onSubmit(content)` sends; `onResend(content, {confirm})` answers the
 * sensitive panel's buttons.
 */
export function initComposer({ uploadPath, onSubmit, onResend }) {
  const form = document.getElementById("composer");
  const input = document.getElementById("composer-input");
  const strip = document.getElementById("attachment-strip");
  const sensitivePanel = document.getElementById("sensitive-panel");
  const attached = []; // {id (once uploaded), file, name, item}

  function autosize() {
    input.style.height = "auto";
    input.style.height = `${Math.min(input.scrollHeight, 240)}px`;
  }

  function forget(entry) {
    const at = attached.indexOf(entry);
    if (at >= 0) attached.splice(at, 1);
    if (entry.preview) URL.revokeObjectURL(entry.preview);
    entry.item.remove();
    strip.hidden = attached.length === 0;
  }

  async function send(entry, path) {
    entry.item.classList.add("uploading");
    try {
      entry.id = (await upload(path, entry.file)).id;
      entry.item.classList.remove("uploading");
    } catch (error) {
      forget(entry);
      toast(format(_("%(name)s: %(problem)s"), { name: entry.name, problem: error.message || _("upload failed") }), { error: true });
      throw error;
    }
  }

  function attach(file) {
    if (attached.length >= 10) { toast(_("At most 10 files per message."), { error: true }); return; }
    const remove = el("button", { type: "button", className: "icon", "aria-label": format(_("Remove %(name)s"), { name: file.name }), text: "×" });
    const preview = file.type.startsWith("image/") ? URL.createObjectURL(file) : null;
    const item = el("li", {}, preview ? el("img", { alt: "", src: preview }) : null,
      el("span", { className: "name", text: file.name }), el("span", { className: "muted", text: formatSize(file.size) }), remove);
    const entry = { id: null, file, name: file.name, item, preview };
    attached.push(entry);
    remove.addEventListener("click", () => forget(entry));
    strip.append(item);
    strip.hidden = false;
    const path = uploadPath();
    if (path) send(entry, path).catch(() => {});
  }
  const attachAll = (files) => { for (const file of files) attach(file); };

  document.getElementById("attach-input").addEventListener("change", (event) => {
    attachAll([...event.target.files]);
    event.target.value = "";
  });
  input.addEventListener("paste", (event) => {
    const files = [...(event.clipboardData?.files || [])];
    if (files.length) { event.preventDefault(); attachAll(files); }
  });
  for (const target of [form, document.getElementById("scroller")].filter(Boolean)) {
    target.addEventListener("dragover", (event) => {
      if ([...(event.dataTransfer?.types || [])].includes("Files")) { event.preventDefault(); form.classList.add("dragging"); }
    });
    target.addEventListener("dragleave", () => form.classList.remove("dragging"));
    target.addEventListener("drop", (event) => {
      form.classList.remove("dragging");
      if (!event.dataTransfer?.files?.length) return;
      event.preventDefault();
      attachAll([...event.dataTransfer.files]);
    });
  }

  const setText = (text) => { input.value = text; autosize(); };
  initPromptMenu({ input, setText });
  initDictation({ input, setText });

  // A phone's keyboard has no Shift+Enter: Return must be a new line there, as in ChatGPT's
  // and Claude's apps (a half-written message never goes out by accident).
  const touchFirst = window.matchMedia("(hover: none) and (pointer: coarse)");
  const showEnterKey = () => { input.enterKeyHint = touchFirst.matches ? "enter" : "send"; };
  showEnterKey();
  touchFirst.addEventListener("change", showEnterKey);
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing && event.keyCode !== 229 && !touchFirst.matches) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  input.addEventListener("input", autosize);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const content = input.value.trim();
    if (!content) return;
    if (attached.some((a) => !a.id && uploadPath())) { toast(_("Wait until the files are uploaded.")); return; }
    onSubmit(content);
  });

  // --- sensitive information (SPEC): the server found some; show where, offer to mask -----
  let asked = null;
  function hideSensitive() { sensitivePanel.hidden = true; }
  function showSensitive(frame, content) {
    asked = content;
    const parts = spans(content, frame.findings || []);
    const kinds = [...new Set((frame.findings || []).map((f) => f.kind))];
    document.getElementById("sensitive-summary").textContent = format(
      _("This message looks like it holds: %(kinds)s. It was not sent."), { kinds: kinds.map(kindText).join(", ") });
    document.getElementById("sensitive-preview").replaceChildren(...parts.map((p) => (p.kind
      ? el("mark", { className: "sensitive", title: kindText(p.kind), text: p.text })
      : document.createTextNode(p.text))));
    document.getElementById("sensitive-send").hidden = frame.can_confirm === false;
    sensitivePanel.hidden = false;
    sensitivePanel.dataset.masked = parts.map((p) => (p.kind ? `[${p.kind}]` : p.text)).join("");
    document.getElementById("sensitive-mask").focus();
  }
  document.getElementById("sensitive-mask").addEventListener("click", () => {
    if (asked !== null) onResend(sensitivePanel.dataset.masked, { confirm: false });
  });
  document.getElementById("sensitive-send").addEventListener("click", () => {
    if (asked !== null) onResend(asked, { confirm: true });
  });
  document.getElementById("sensitive-cancel").addEventListener("click", () => {
    hideSensitive();
    input.focus();
  });

  autosize();
  return {
    input,
    autosize,
    showSensitive,
    hideSensitive,
    /** The uploaded files' ids (every file must be uploaded). */
    attachmentIds: () => attached.map((a) => a.id).filter(Boolean),
    hasFiles: () => attached.length > 0,
    /** Upload the files kept so far (a new chat's, once its conversation exists). */
    async uploadAll(path) {
      for (const entry of [...attached]) if (!entry.id) await send(entry, path);
    },
    /** Take the files off the strip: those with these ids (sent), or all. */
    clearFiles(ids) {
      for (const entry of [...attached]) if (!ids || ids.includes(entry.id)) forget(entry);
    },
    setText(text) { input.value = text; autosize(); },
  };
}
