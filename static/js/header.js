// The conversation header: rename inline, summarize, archive, move, delete, export menu.
import { api } from "./api.js";
import { confirmDialog, copyText, el, toast } from "./dom.js";
import { _, format, formatNumber, ngettext } from "./i18n.js";

// Wire the header's controls; return `updateHeader(conversation)` for live updates.
export function initHeader(root, conversationId) {
  const title = document.getElementById("conv-title");
  const renameForm = document.getElementById("rename-form");
  const renameInput = document.getElementById("rename-input");
  const renameButton = document.getElementById("rename-button");

  function updateHeader(conversation) {
    if (renameForm.hidden) {
      title.textContent = conversation.title || _("Untitled");
      renameInput.value = conversation.title || "";
      document.title = `${title.textContent} · ${document.title.split(" · ").pop()}`;
    }
    const sidebarLink = document.querySelector(`#sidebar li[data-id="${conversation.id}"] a`);
    if (sidebarLink) sidebarLink.textContent = conversation.title || _("Untitled");
    const status = document.getElementById("conv-status");
    const labels = { active: _("Active"), archived: _("Archived"), summarized: _("Summarized") };
    status.textContent = labels[conversation.status] || conversation.status;
    status.className = `badge status-${conversation.status}`;
    const archive = document.getElementById("archive-button");
    archive.dataset.archived = conversation.status === "archived" ? "1" : "0";
    archive.textContent = conversation.status === "archived" ? _("Unarchive") : _("Archive");
    if (conversation.summary) showSummary(conversation.summary, conversation.summary_at);
    const project = document.getElementById("project-select");
    if (document.activeElement !== project) project.value = conversation.project_id ?? "";
    showInstructions(conversation);
    showStats(conversation.message_count, conversation.total_tokens_used);
  }

  // The model and instructions as another tab (or the API) left them.
  function showInstructions(conversation) {
    const model = document.getElementById("model-select");
    if ("model" in conversation && document.activeElement !== model) model.value = conversation.model || "";
    const menu = document.getElementById("instructions-menu");
    if (!("system_prompt" in conversation) || menu.open) return;
    document.getElementById("system-prompt").value = conversation.system_prompt || "";
    document.getElementById("temperature").value = conversation.temperature ?? "";
    menu.querySelector("summary").textContent =
      _("Instructions") + (conversation.system_prompt ? " •" : "");
  }

  // "N messages, M tokens": every conversation.updated carries the counters, in every tab.
  function showStats(messages, tokens) {
    if (typeof messages !== "number") return;
    const template = ngettext("%(shown)s message, %(tokens)s tokens",
      "%(shown)s messages, %(tokens)s tokens", messages);
    document.getElementById("conv-stats").textContent =
      format(template, { shown: formatNumber(messages), tokens: formatNumber(tokens || 0) });
  }

  // The panel shows the summary's Markdown as the server renders (and sanitizes) it.
  let shownSummary = null;
  async function showSummary(text, at) {
    const panel = document.getElementById("summary-panel");
    const box = document.getElementById("summary-text");
    if (text !== shownSummary) {
      shownSummary = text;
      box.textContent = text;
      try {
        const response = await fetch(box.dataset.url, { credentials: "same-origin" });
        if (response.ok && shownSummary === text) box.innerHTML = await response.text();
      } catch { /* the plain text stays */ }
    }
    const time = document.getElementById("summary-at");
    if (at) {
      time.dateTime = at;
      time.textContent = new Intl.DateTimeFormat(document.documentElement.lang || undefined,
        { dateStyle: "short", timeStyle: "short" }).format(new Date(at));
    }
    panel.hidden = false;
    panel.open = true;
  }

  function openRename() {
    renameForm.hidden = false;
    title.hidden = true;
    renameButton.hidden = true;
    renameInput.focus();
    renameInput.select();
  }
  function closeRename() {
    renameForm.hidden = true;
    title.hidden = false;
    renameButton.hidden = false;
  }
  renameButton.addEventListener("click", openRename);
  title.addEventListener("dblclick", openRename);
  document.getElementById("rename-cancel").addEventListener("click", closeRename);
  renameInput.addEventListener("keydown", (event) => {
    if (event.key === "Escape") { event.stopPropagation(); closeRename(); renameButton.focus(); }
  });
  renameForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const conversation = await api("PATCH", `/conversations/${conversationId}`, { title: renameInput.value });
      closeRename();
      updateHeader(conversation);
      renameButton.focus();
    } catch (error) {
      toast(error.message, { error: true });
    }
  });

  async function headerAction(button, work) {
    button.disabled = true;
    try { await work(); } catch (error) { toast(error.message || _("Something went wrong."), { error: true }); }
    finally { button.disabled = false; }
  }

  document.getElementById("summarize-button").addEventListener("click", (event) => {
    const button = event.currentTarget;
    const label = button.textContent;
    button.textContent = _("Summarizing…");
    headerAction(button, async () => {
      const conversation = await api("POST", `/conversations/${conversationId}/summarize`, {});
      showSummary(conversation.summary, conversation.summary_at);
      updateHeader(conversation);
    }).finally(() => { button.textContent = label; });
  });

  // Share links: listed when the menu opens; create copies the new link; revoke deletes it.
  const shareMenu = document.getElementById("share-menu");
  const shareList = document.getElementById("share-list");
  function shareItem(share) {
    const url = el("input", { type: "text", readonly: true, value: share.url });
    url.setAttribute("aria-label", _("Share link"));
    const copy = el("button", { type: "button", text: _("Copy") });
    copy.addEventListener("click", async () => { await copyText(share.url); toast(_("Link copied.")); });
    const revoke = el("button", { type: "button", className: "danger", text: _("Revoke") });
    revoke.addEventListener("click", () => headerAction(revoke, async () => {
      if (!(await confirmDialog(_("Revoke this link? It will stop working at once."), _("Revoke")))) return;
      await api("DELETE", `/shares/${share.id}`);
      item.remove();
      toast(_("Link revoked."));
    }));
    const item = el("li", { "data-id": share.id }, url, copy, revoke);
    return item;
  }
  shareMenu.addEventListener("toggle", async () => {
    if (!shareMenu.open) return;
    try {
      const page = await api("GET", `/shares?conversation_id=${conversationId}`);
      shareList.replaceChildren(...page.items.map(shareItem));
    } catch (error) {
      toast(error.message, { error: true });
    }
  });
  document.getElementById("share-create").addEventListener("click", (event) => {
    headerAction(event.currentTarget, async () => {
      const share = await api("POST", `/conversations/${conversationId}/shares`);
      shareList.prepend(shareItem(share));
      try { await copyText(share.url); toast(_("Link created and copied.")); }
      catch { toast(_("Link created.")); }
    });
  });

  document.getElementById("archive-button").addEventListener("click", (event) => {
    const button = event.currentTarget;
    headerAction(button, async () => {
      const status = button.dataset.archived === "1" ? "active" : "archived";
      updateHeader(await api("PATCH", `/conversations/${conversationId}`, { status }));
      toast(status === "archived" ? _("Conversation archived.") : _("Conversation restored."));
    });
  });

  document.getElementById("project-select").addEventListener("change", (event) => {
    const select = event.currentTarget;
    const value = select.value ? Number(select.value) : null;
    headerAction(select, async () => {
      updateHeader(await api("PATCH", `/conversations/${conversationId}`, { project_id: value }));
      toast(_("Moved."));
    });
  });

  document.getElementById("model-select").addEventListener("change", (event) => {
    const select = event.currentTarget;
    headerAction(select, async () => {
      updateHeader(await api("PATCH", `/conversations/${conversationId}`, { model: select.value }));
      toast(select.value ? format(_("Answers now come from %(model)s."), { model: select.value })
        : _("Answers now come from your default model."));
    });
  });

  document.getElementById("instructions-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const temperature = form.elements.temperature.value.trim();
    headerAction(document.getElementById("instructions-save"), async () => {
      const conversation = await api("PATCH", `/conversations/${conversationId}`, {
        system_prompt: form.elements.system_prompt.value,
        temperature: temperature === "" ? null : Number(temperature),
      });
      document.getElementById("instructions-menu").open = false;
      updateHeader(conversation);
      toast(_("Instructions saved."));
    });
  });

  document.getElementById("delete-button").addEventListener("click", (event) => {
    headerAction(event.currentTarget, async () => {
      if (!(await confirmDialog(_("Delete this conversation and all its messages? This cannot be undone."), _("Delete")))) return;
      await api("DELETE", `/conversations/${conversationId}`);
      location.href = root.dataset.homeUrl;
    });
  });

  document.getElementById("export-menu").addEventListener("click", (event) => {
    if (event.target.closest("a")) event.currentTarget.open = false;
  });

  return updateHeader;
}
