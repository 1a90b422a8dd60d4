// The conversation header: rename inline, the model, and the ⋯ menu (pin, project,
// instructions, summarize, export, share, archive, delete) with its dialogs.
import { api } from "./api.js";
import { confirmDialog, copyText, el, toast } from "./dom.js";
import { _, format, formatDate, formatNumber, localizeTimes, ngettext } from "./i18n.js";
import { share } from "./live.js";
import { chooseProject } from "./projects.js";
import { renderRich } from "./rich.js";
import { showConversation } from "./sidebar.js";

// Wire the header's controls; return `{updateHeader}` for live updates.
export function initHeader(root, conversationId) {
  const title = document.getElementById("conv-title");
  const renameForm = document.getElementById("rename-form");
  const renameInput = document.getElementById("rename-input");
  const renameButton = document.getElementById("rename-button");

  function updateHeader(conversation) {
    if ("title" in conversation && renameForm.hidden) {
      title.textContent = conversation.title || _("Untitled");
      renameInput.value = conversation.title || "";
      document.title = `${title.textContent} · ${document.title.split(" · ").pop()}`;
    }
    if ("status" in conversation) {
      const status = document.getElementById("conv-status");
      const labels = { active: _("Active"), archived: _("Archived"), summarized: _("Summarized") };
      status.textContent = labels[conversation.status] || conversation.status;
      status.className = `badge status-${conversation.status}`;
      status.hidden = conversation.status === "active";
      const archive = document.getElementById("archive-button");
      archive.dataset.archived = conversation.status === "archived" ? "1" : "0";
      archive.querySelector("span").textContent = conversation.status === "archived" ? _("Unarchive") : _("Archive");
    }
    if ("pinned" in conversation) {
      const pin = document.getElementById("pin-button");
      pin.dataset.pinned = conversation.pinned ? "1" : "0";
      pin.querySelector("span").textContent = conversation.pinned ? _("Unpin") : _("Pin");
    }
    if (conversation.summary) showSummary(conversation.summary, conversation.summary_at);
    if ("project_id" in conversation) root.dataset.projectId = conversation.project_id ?? "";
    showInstructions(conversation);
  }

  // The model and instructions as another tab (or the API) left them.
  function showInstructions(conversation) {
    const model = document.getElementById("model-select");
    if (model && "model" in conversation && document.activeElement !== model) model.value = conversation.model || "";
    const dialog = document.getElementById("instructions-dialog");
    if (!("system_prompt" in conversation) || dialog.open) return;
    document.getElementById("system-prompt").value = conversation.system_prompt || "";
    document.getElementById("temperature").value = conversation.temperature ?? "";
    const button = document.getElementById("instructions-button");
    button.querySelector(".dot")?.remove();
    if (conversation.system_prompt) button.append(el("span", { className: "dot", "aria-label": _("set") }));
  }

  // "N messages · M tokens" adds up with the messages the page shows: the ones in the list
  // (a reply being written is one, its tokens counted once it is stored) plus those of the
  // branch the page leaves out (older ones not loaded, ones a filter hides), which the
  // server counts (data-hidden-*). Recounted whenever the list changes, so it never lags.
  const list = document.getElementById("messages");
  function recount() {
    let messages = Number(root.dataset.hiddenMessages) || 0;
    let tokens = Number(root.dataset.hiddenTokens) || 0;
    let estimated = root.dataset.hiddenEstimated === "1";
    for (const li of list.querySelectorAll(":scope > li.message")) {
      messages += 1;
      tokens += Number(li.dataset.tokens) || 0;
      if (li.dataset.tokensEstimated === "1") estimated = true;
    }
    const template = estimated
      ? ngettext("%(shown)s message · ≈ %(tokens)s tokens", "%(shown)s messages · ≈ %(tokens)s tokens", messages)
      : ngettext("%(shown)s message · %(tokens)s tokens", "%(shown)s messages · %(tokens)s tokens", messages);
    const text = format(template, { shown: formatNumber(messages), tokens: formatNumber(tokens) });
    const stats = document.getElementById("conv-stats");
    if (stats.textContent !== text) stats.textContent = text;
  }
  let queued = false;
  const schedule = () => {
    if (queued) return;
    queued = true;
    queueMicrotask(() => { queued = false; recount(); });
  };
  new MutationObserver(schedule).observe(list, { childList: true });
  new MutationObserver(schedule).observe(list, {
    subtree: true, attributes: true, attributeFilter: ["data-tokens", "data-tokens-estimated"],
  });
  new MutationObserver(schedule).observe(root, {
    attributes: true, attributeFilter: ["data-hidden-messages", "data-hidden-tokens", "data-hidden-estimated"],
  });
  schedule();

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
        if (response.ok && shownSummary === text) {
          box.innerHTML = await response.text(); // server-rendered, nh3-sanitized
          renderRich(box);
        }
      } catch { /* the plain text stays */ }
    }
    const time = document.getElementById("summary-at");
    if (at) {
      time.dateTime = at;
      localizeTimes(time);
    }
    panel.hidden = false;
    panel.querySelector("details").open = true;
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
    toast(_("Summarizing…"));
    headerAction(button, async () => {
      const conversation = await api("POST", `/conversations/${conversationId}/summarize`, {});
      await showSummary(conversation.summary, conversation.summary_at);
      updateHeader(conversation);
      document.getElementById("summary-panel").scrollIntoView({ block: "nearest" });
      toast(_("Summary written."));
    });
  });

  document.getElementById("pin-button").addEventListener("click", (event) => {
    const button = event.currentTarget;
    headerAction(button, async () => {
      const pinned = button.dataset.pinned !== "1";
      const conversation = await api("PATCH", `/conversations/${conversationId}`, { pinned });
      updateHeader(conversation);
      share({ type: "conversation.updated", conversation });
      toast(pinned ? _("Pinned.") : _("Unpinned."));
    });
  });

  // Share links: listed when the menu opens; create copies the new link; revoke deletes it.
  const shareList = document.getElementById("share-list");
  function shareItem(share) {
    // The whole link, wrapped where it must: never cut off (an <input> scrolls it away).
    const url = el("a", { className: "share-url", href: share.url, target: "_blank", rel: "noopener", text: share.url });
    const copy = el("button", { type: "button", text: _("Copy") });
    copy.addEventListener("click", async () => { await copyText(share.url); toast(_("Link copied.")); });
    const revoke = el("button", { type: "button", className: "danger", text: _("Revoke") });
    revoke.addEventListener("click", () => headerAction(revoke, async () => {
      if (!(await confirmDialog(_("Revoke this link? It will stop working at once."), _("Revoke")))) return;
      await api("DELETE", `/shares/${share.id}`);
      item.remove();
      toast(_("Link revoked."));
    }));
    const created = el("span", { className: "meta", text: format(_("Made %(when)s"), { when: formatDate(share.created_at) }) });
    const item = el("li", { "data-id": share.id }, url, el("div", { className: "row" }, created, el("span", { className: "row" }, copy, revoke)));
    return item;
  }
  // The listing in flight: a link made while it is on its way is added after it lands
  // (else a list read before the link existed would draw over it).
  let listing = Promise.resolve();
  document.getElementById("share-button")?.addEventListener("click", () => {
    listing = api("GET", `/shares?conversation_id=${conversationId}`)
      .then((page) => shareList.replaceChildren(...page.items.map(shareItem)))
      .catch((error) => toast(error.message, { error: true }));
  });
  document.getElementById("share-create")?.addEventListener("click", (event) => {
    headerAction(event.currentTarget, async () => {
      const share = await api("POST", `/conversations/${conversationId}/shares`);
      await listing;
      if (!shareList.querySelector(`li[data-id="${share.id}"]`)) shareList.prepend(shareItem(share));
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

  document.getElementById("move-button").addEventListener("click", async (event) => {
    const button = event.currentTarget;
    const current = root.dataset.projectId ? Number(root.dataset.projectId) : null;
    const value = await chooseProject(current);
    if (value === undefined) return;
    headerAction(button, async () => {
      const conversation = await api("PATCH", `/conversations/${conversationId}`, { project_id: value });
      updateHeader(conversation);
      share({ type: "conversation.updated", conversation });
      showConversation(conversation); // this tab's sidebar too
      toast(_("Moved."));
    });
  });

  // On a phone the model pickers live in the ⋯ menu: the title keeps the header's room.
  const pickers = [document.getElementById("model-select") || document.getElementById("model-select-name"),
    document.getElementById("compare-select")].filter(Boolean);
  const phone = window.matchMedia("(max-width: 600px)");
  const placePicker = () => {
    const items = document.querySelector("#conv-menu .menu-items");
    if (phone.matches) items.prepend(...pickers);
    else document.getElementById("conv-menu").before(...pickers);
  };
  placePicker();
  phone.addEventListener("change", placePicker);

  document.getElementById("model-select")?.addEventListener("change", (event) => {
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
      document.getElementById("instructions-dialog").close();
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
    if (event.target.closest("a")) document.getElementById("export-dialog").close();
  });

  return { updateHeader };
}
