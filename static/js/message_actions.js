// What the buttons under a message do (copy, fork, rate, report, delete, regenerate,
// continue, edit, switch branch), and editing a message in place.
import { api } from "./api.js";
import { newClientId } from "./composer.js";
import { confirmDialog, copyText, el, toast } from "./dom.js";
import { _ } from "./i18n.js";
import { readAloud } from "./read_aloud.js";

// `isRunning()`: whether a reply runs; `startAction(frame)` sends a regenerate or continue,
// `sendAsk(frame)` an edit; `send(frame)` any other frame; `reloadBranch()` shows the
// current branch again.
export function initMessageActions(conversationId, { isRunning, startAction, sendAsk, send, reloadBranch }) {
  const list = document.getElementById("messages");

  // `limit`: the dialog's data attribute naming the longest text the server takes.
  function askComment(title, limit = "commentMax") {
    const dialog = document.getElementById("comment-dialog");
    dialog.querySelector("#comment-title").textContent = title;
    const area = dialog.querySelector("#comment-input");
    area.maxLength = Number(dialog.dataset[limit]) || 500;
    area.value = "";
    dialog.returnValue = "";
    dialog.showModal();
    return new Promise((resolve) => {
      dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok" ? area.value.trim() : null), { once: true });
    });
  }

  const ACTIONS = {
    copy: (li) => copyText(li.dataset.raw ?? li.querySelector(".content").textContent),
    speak: (li, button) => readAloud(li, button),
    async fork(li) {
      const fork = await api("POST", `/conversations/${conversationId}/fork`, { from_message_id: li.dataset.id });
      location.href = `/conversations/${fork.id}/`;
    },
    up: (li, button) => rate(li, button, "up"),
    down: (li, button) => rate(li, button, "down"),
    async report(li) {
      const reason = await askComment(_("Report this message"), "reportMax");
      if (reason === null) return;
      await api("POST", `/messages/${li.dataset.id}/report`, { reason });
      toast(_("Thank you. The message was reported."));
    },
    async delete(li) {
      const text = _("Delete this message and everything after it on this branch? The assistant forgets them too.");
      if (!(await confirmDialog(text, _("Delete")))) return;
      await api("DELETE", `/messages/${li.dataset.id}`);
      await reloadBranch();
      toast(_("Message deleted."));
    },
    regenerate(li) {
      if (isRunning()) return;
      startAction({ type: "message.regenerate", message_id: li.dataset.id });
    },
    continue(li) {
      if (isRunning()) return;
      startAction({ type: "message.continue", message_id: li.dataset.id });
    },
    edit(li) {
      if (!isRunning()) openEditor(li);
    },
    switch(li, button) {
      if (button.dataset.target) send({ type: "branch.switch", message_id: button.dataset.target });
    },
  };

  // Edit in place: Enter sends the new version (a sibling), Esc puts the message back.
  function openEditor(li) {
    if (li.querySelector(".editor")) return;
    const bubble = li.querySelector(".bubble");
    const area = el("textarea", { className: "editor-input", rows: 3, "aria-label": _("Edit message") });
    area.value = li.dataset.raw ?? bubble.querySelector(".content").textContent;
    const save = el("button", { type: "submit", className: "primary", text: _("Send") });
    const cancel = el("button", { type: "button", text: _("Cancel") });
    const form = el("form", { className: "editor" }, area, el("div", { className: "row" }, save, cancel));
    bubble.hidden = true;
    bubble.after(form);
    li.classList.add("editing"); // the whole column's width, without its actions (app.css)
    const close = () => { form.remove(); bubble.hidden = false; li.classList.remove("editing"); };
    cancel.addEventListener("click", close);
    area.addEventListener("keydown", (event) => {
      if (event.key === "Escape") { event.preventDefault(); event.stopPropagation(); close(); }
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing && event.keyCode !== 229) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const content = area.value.trim();
      if (!content || isRunning()) return;
      if (content === (li.dataset.raw ?? "").trim()) { close(); return; }
      close();
      sendAsk({ type: "message.edit", message_id: li.dataset.id, content, client_id: newClientId() });
    });
    area.focus();
    area.setSelectionRange(area.value.length, area.value.length);
  }

  // A thumbs-down asks what was wrong: reason chips and, if the person wants, words.
  function askWhatWentWrong() {
    const dialog = document.getElementById("feedback-dialog");
    const form = dialog.querySelector("form");
    form.reset();
    dialog.returnValue = "";
    dialog.showModal();
    return new Promise((resolve) => {
      dialog.addEventListener("close", () => {
        if (dialog.returnValue !== "ok") { resolve(null); return; }
        const reasons = [...form.querySelectorAll("input[name=reason]:checked")].map((box) => box.value);
        resolve({ reasons, comment: form.querySelector("#feedback-comment").value.trim() });
      }, { once: true });
    });
  }

  // A thumbs-up is recorded at once (as in ChatGPT); a thumbs-down asks what went wrong.
  async function rate(li, button, rating) {
    const said = rating === "down" ? await askWhatWentWrong() : { reasons: [], comment: "" };
    if (said === null) return;
    await api("POST", `/messages/${li.dataset.id}/feedback`, { rating, ...said });
    for (const b of li.querySelectorAll('[data-action="up"], [data-action="down"]')) b.setAttribute("aria-pressed", String(b === button));
    toast(_("Thanks for the feedback."));
  }

  // On a touch screen a tap on a message shows its actions and its line; a tap elsewhere
  // (or on another message) hides them again (app.css: hover:none).
  const touch = window.matchMedia("(hover: none)");
  document.addEventListener("click", (event) => {
    if (!touch.matches) return;
    const li = event.target.closest("li.message");
    if (li && event.target.closest("a, button, summary, details, input, textarea, select")) return;
    for (const shown of list.querySelectorAll("li.message.tapped")) if (shown !== li) shown.classList.remove("tapped");
    li?.classList.toggle("tapped");
  });

  list.addEventListener("click", async (event) => {
    const button = event.target.closest("button[data-action]");
    if (!button) return;
    const li = button.closest("li.message");
    const action = ACTIONS[button.dataset.action];
    if (!li || !action || !li.dataset.id) return;
    button.disabled = true;
    try {
      await action(li, button);
    } catch (error) {
      toast(error.status === 404 && button.dataset.action === "report"
        ? _("Reporting is not available yet.") : (error.message || _("Something went wrong.")), { error: true });
    } finally {
      button.disabled = false;
    }
  });

  return { openEditor };
}
