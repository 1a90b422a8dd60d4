// The conversation page: live chat over the socket, per-message and header actions.
import { api } from "./api.js";
import { initComposer, newClientId } from "./composer.js";
import { confirmDialog, copyText, el, parseFragment, toast } from "./dom.js";
import { _, format } from "./i18n.js";
import { share } from "./live.js";
import { initHeader } from "./header.js";
import { ConversationSocket } from "./socket.js";
import { renderRich } from "./rich.js";
import { stepText } from "./steps.js";

const root = document.getElementById("conversation");
const list = document.getElementById("messages");
const scroller = document.getElementById("scroller");
const input = document.getElementById("composer-input");
const sendButton = document.getElementById("send-button");
const stopButton = document.getElementById("stop-button");
const banner = document.getElementById("connection-banner");
const errorBanner = document.getElementById("error-banner");
const liveRegion = document.getElementById("live-region");
const conversationId = root.dataset.id;

let running = false;
let streaming = null; // the <li> of the reply in progress
let pendingSend = null; // text of a sent message not yet acknowledged

// --- rendering -------------------------------------------------------------------------
function messageItems() {
  return [...list.querySelectorAll(":scope > li.message[data-seq]")];
}

// The stored text of each message the page has shown (a continue starts from it).
const texts = new Map();

function remember(scope) {
  for (const li of scope.querySelectorAll("li.message[data-id]")) {
    if (li.dataset.raw !== undefined) texts.set(li.dataset.id, li.dataset.raw);
  }
}

// The newest message shown: the leaf of the branch on the page.
function shownLeaf() {
  const items = messageItems().filter((li) => li !== streaming);
  return items.length ? items[items.length - 1].dataset.id : null;
}

function maxSeq() {
  return messageItems().reduce((n, li) => Math.max(n, Number(li.dataset.seq) || 0), 0);
}

function nearBottom() {
  return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 120;
}

function scrollToBottom() {
  scroller.scrollTop = scroller.scrollHeight;
}

function enhance(scope) {
  for (const pre of scope.querySelectorAll(".markdown pre")) {
    if (pre.parentElement.classList.contains("code-block")) continue;
    const wrap = el("div", { className: "code-block" });
    const code = pre.querySelector("code");
    const language = code && [...code.classList].find((c) => c.startsWith("language-"));
    const button = el("button", { type: "button", className: "copy-code", text: _("Copy code") });
    button.addEventListener("click", () => copyText(pre.textContent));
    pre.replaceWith(wrap);
    wrap.append(el("div", { className: "code-head" },
      el("span", { text: language ? language.slice(9) : "" }), button), pre);
  }
  for (const ref of scope.querySelectorAll(".ledger-ref")) {
    const target = document.getElementById(`msg-${ref.dataset.ref}`);
    if (target) ref.textContent = `#${target.dataset.seq}`;
  }
  if (scope.matches?.("li.message") || scope.querySelector("li.message")) document.getElementById("empty-chat")?.remove();
  renderRich(scope); // math and diagrams; never rejects
}

// Insert a server-rendered message <li> in sequence order (or replace its placeholder).
function place(node) {
  const seq = Number(node.dataset.seq);
  const existing = document.getElementById(node.id);
  if (existing) {
    existing.replaceWith(node);
    return;
  }
  const after = messageItems().find((li) => Number(li.dataset.seq) > seq);
  if (after) list.insertBefore(node, after);
  else if (streaming && streaming.parentElement === list) list.insertBefore(node, streaming);
  else list.append(node);
}

// Whether a stored message's token count is an estimate (older replies say so in their ledger).
function tokensEstimated(message) {
  const metadata = message.metadata || {};
  return Boolean(metadata.tokens_estimated || (metadata.context && metadata.context.usage_estimated));
}

async function showStored(message) {
  if (document.getElementById(`msg-${message.id}`)?.dataset.final === "1") return;
  const stick = nearBottom();
  const replacing = message.role === "assistant" && streaming;
  // The placeholder carries the message's id: until its fragment arrives it is the leaf
  // shown (shownLeaf), and the reply to it must be seen to follow it. It carries its counts
  // too: the header adds up what the list shows.
  const placeholder = replacing ? streaming : el("li", {
    className: `message ${message.role} loading`, id: `msg-${message.id}`,
    "data-id": message.id, "data-seq": message.sequence_number,
  }, el("div", { className: "bubble" }, el("div", { className: "content plain", text: message.content })));
  placeholder.dataset.tokens = message.tokens_used || 0;
  if (tokensEstimated(message)) placeholder.dataset.tokensEstimated = "1";
  if (replacing) {
    streaming = null;
    placeholder.id = `msg-${message.id}`;
    placeholder.dataset.id = message.id;
    placeholder.dataset.seq = message.sequence_number;
  } else {
    place(placeholder);
  }
  if (stick) scrollToBottom();
  try {
    const response = await fetch(`${root.dataset.messageUrl}${message.id}/fragment/`, { credentials: "same-origin" });
    if (!response.ok) throw new Error(String(response.status));
    const fragment = parseFragment(await response.text());
    const node = fragment.querySelector("li.message");
    node.dataset.final = "1";
    enhance(node);
    placeholder.replaceWith(node);
    if (stick) scrollToBottom();
  } catch {
    placeholder.classList.remove("loading"); // keep the plain text; a reload shows the rest
  }
  if (message.role === "assistant") liveRegion.textContent = _("Reply received.");
}

function ensureStreaming() {
  if (streaming) return streaming;
  const stick = nearBottom();
  streaming = el("li", { className: "message assistant streaming", "aria-busy": "true" },
    el("ol", { className: "live-steps", "aria-label": _("Working…") }),
    el("div", { className: "bubble" },
      el("span", { className: "visually-hidden", text: _("Assistant is replying:") }),
      el("div", { className: "content plain stream-text" }),
      el("span", { className: "cursor", "aria-hidden": "true" })));
  list.append(streaming);
  if (stick) scrollToBottom();
  return streaming;
}

// --- state -----------------------------------------------------------------------------
// While a reply runs the box stays open: what is sent meanwhile waits in the queue.
function setRunning(value) {
  running = value;
  stopButton.hidden = !value;
  root.classList.toggle("running", value);
  showSendButton();
  if (!value && !pendingSend) {
    if (document.activeElement === document.body || document.activeElement === stopButton) input.focus();
    flushQueue();
  }
}
function showSendButton() {
  sendButton.hidden = running && !input.value.trim();
}

function showError(text) {
  errorBanner.textContent = text;
  errorBanner.hidden = !text;
}

const ERROR_TEXT = {
  invalid: () => _("That message could not be sent."),
  too_long: () => _("That message is too long."),
  rate_limited: () => _("You are sending messages too fast; wait a moment."),
  busy: () => _("A reply is already running; your message waits until it ends."),
  llm_unavailable: () => _("The model is not available right now."),
  unavailable: () => _("The conversation's memory could not be reached; try again in a moment."),
  not_found: () => _("This conversation no longer exists."),
};

// --- socket ----------------------------------------------------------------------------
const socket = new ConversationSocket(root.dataset.wsPath, {
  lastSeq: maxSeq(),
  handlers: {
    onOpen() {
      banner.hidden = true;
    },
    onClose(_event, retry) {
      if (!retry) return;
      banner.textContent = _("Connection lost. Reconnecting…");
      banner.hidden = false;
    },
    onFatal(code) {
      if (code === 4401) { location.href = `/accounts/login/?next=${encodeURIComponent(location.pathname)}`; return; }
      banner.textContent = _("This conversation is not available.");
      banner.hidden = false;
      setRunning(false);
      sendButton.disabled = true;
    },
    onMessage(message) {
      texts.set(message.id, message.content);
      if (message.role === "user" && pendingSend !== null) {
        pendingSend = null;
        showError("");
        if ((message.attachments || []).length) composer.clearFiles(message.attachments.map((a) => a.id));
      }
      // A message that does not follow the branch shown (an edit, another tab's switch):
      // show the current branch instead.
      const follows = (message.parent_id || null) === shownLeaf();
      if (!follows && !document.getElementById(`msg-${message.id}`)) reloadBranch();
      else {
        if (reloading) arrivedWhileReloading.add(message.id);
        showStored(message);
      }
    },
    onStarted() {
      pendingSend = null;
      setRunning(true);
      ensureStreaming();
    },
    onText(run) {
      const node = ensureStreaming();
      const stick = nearBottom();
      node.querySelector(".stream-text").textContent = run.text;
      if (stick) scrollToBottom();
    },
    onThinking(frame) {
      const node = ensureStreaming();
      const text = stepText(frame);
      if (text) node.querySelector(".live-steps").append(el("li", { className: `step step-${frame.step}`, text }));
    },
    onSources(frame) {
      const node = ensureStreaming();
      const items = (frame.items || []).map((s) => {
        const label = [s.document_title || s.title || s.filename || s.document_id || "", s.section]
          .filter(Boolean).join(" · ");
        // Only our own relative links: a source never becomes a javascript: URL.
        const safe = typeof s.url === "string" && s.url.startsWith("/documents/") && !s.url.includes("//");
        return el("li", {}, safe ? el("a", { href: s.url, target: "_blank", rel: "noopener", text: label })
          : el("span", { text: label }));
      });
      node.append(el("details", { className: "details" },
        el("summary", { text: format(_("%(n)s sources"), { n: items.length }) }),
        el("div", { className: "details-body" }, el("ol", {}, ...items))));
    },
    onFinished(frame) {
      setRunning(false);
      if (!frame.message && streaming) {
        // Nothing was stored for this reply (stopped before any text): drop the bubble.
        const text = streaming.querySelector(".stream-text").textContent;
        if (!text) { streaming.remove(); streaming = null; }
      }
    },
    onIdle() {
      if (!pendingSend) setRunning(false);
      flushQueue();
    },
    onConversation(conversation) {
      if ("current_message_id" in conversation && (conversation.current_message_id || null) !== shownLeaf()) {
        reloadBranch();
      }
      updateHeader(conversation);
      share({ type: "conversation.updated", conversation });
    },
    onDeleted() {
      share({ type: "conversation.deleted", conversation_id: conversationId });
      location.href = root.dataset.homeUrl;
    },
    textOf(messageId) {
      return texts.get(messageId);
    },
    onError(frame) {
      if (frame.code === "sensitive") {
        if (pendingSend !== null && lastAsk && lastAsk.type === "message.send" && !input.value) composer.setText(pendingSend);
        pendingSend = null;
        setRunning(false);
        if (lastAsk) composer.showSensitive(frame, lastAsk.content);
        showError("");
        return;
      }
      if (frame.code === "busy" && pendingSend !== null && lastAsk?.type === "message.send") {
        // Another tab's reply is running: this one waits its turn, never lost.
        enqueue(lastAsk, { front: true });
        pendingSend = null;
        return;
      }
      showError((ERROR_TEXT[frame.code] || (() => frame.detail || _("Something went wrong.")))());
      if (pendingSend !== null) {
        if (!input.value) composer.setText(pendingSend);
        pendingSend = null;
        if (frame.code !== "busy") setRunning(false);
      }
    },
  },
});
for (const li of messageItems()) socket.seen.add(li.dataset.id);

// --- composer: sends at once, or queues while a reply runs --------------------------------
const composer = initComposer({
  uploadPath: () => `/conversations/${conversationId}/attachments`,
  onSubmit(content) {
    const frame = { type: "message.send", content, client_id: newClientId() };
    const ids = composer.attachmentIds();
    if (ids.length) frame.attachments = ids;
    if (running || pendingSend !== null || queue.length) {
      enqueue(frame);
      composer.setText("");
      composer.clearFiles();
      showSendButton();
      return;
    }
    sendAsk(frame);
  },
  onResend(content, { confirm }) {
    if (!lastAsk || running) return;
    const frame = { ...lastAsk, content, client_id: newClientId() };
    if (confirm) frame.confirm_sensitive = true;
    sendAsk(frame);
  },
});
input.addEventListener("input", showSendButton);
// Up in the empty box edits the last message of yours (as in a terminal or Slack).
input.addEventListener("keydown", (event) => {
  if (event.key !== "ArrowUp" || input.value || running) return;
  const mine = messageItems().filter((li) => li.dataset.role === "user");
  if (!mine.length) return;
  event.preventDefault();
  openEditor(mine[mine.length - 1]);
});

// The last message.send / message.edit frame: a `sensitive` answer offers to resend it.
let lastAsk = null;
function sendAsk(frame) {
  lastAsk = frame;
  composer.hideSensitive();
  pendingSend = frame.content;
  if (frame.type === "message.send") composer.setText("");
  startAction(frame);
}

// --- the queue: messages written while a reply runs, sent in order when it ends ------------
// Kept in sessionStorage, so a reload (or a new chat's first message with files) loses none.
const queueKey = `chat.queue.${conversationId}`;
const queueList = document.getElementById("queue");
let queue = [];
try { queue = JSON.parse(sessionStorage.getItem(queueKey) || "[]"); } catch { queue = []; }

function saveQueue() {
  if (queue.length) sessionStorage.setItem(queueKey, JSON.stringify(queue));
  else sessionStorage.removeItem(queueKey);
  renderQueue();
}
function enqueue(frame, { front = false } = {}) {
  if (queue.some((f) => f.client_id === frame.client_id)) return;
  if (front) queue.unshift(frame); else queue.push(frame);
  saveQueue();
}
function renderQueue() {
  queueList.replaceChildren(...queue.map((frame) => {
    const edit = el("button", { type: "button", className: "link", text: _("Edit") });
    const cancel = el("button", { type: "button", className: "link", text: _("Cancel") });
    const files = (frame.attachments || []).length;
    const item = el("li", { "data-client-id": frame.client_id },
      el("div", { className: "bubble", text: frame.content }),
      el("div", { className: "queued-foot" },
        el("span", { text: files ? format(_("Queued with %(n)s file(s): sent when the reply ends"), { n: files })
          : _("Queued: sent when the reply ends") }), "·", edit, "·", cancel));
    edit.addEventListener("click", () => {
      queue = queue.filter((f) => f !== frame);
      saveQueue();
      composer.setText(input.value ? `${input.value}\n${frame.content}` : frame.content);
      input.focus();
    });
    cancel.addEventListener("click", () => {
      queue = queue.filter((f) => f !== frame);
      saveQueue();
      toast(_("Queued message removed."));
    });
    return item;
  }));
  queueList.hidden = queue.length === 0;
}
function flushQueue() {
  if (running || pendingSend !== null || !queue.length || !socket.isOpen) return;
  const frame = queue.shift();
  saveQueue();
  sendAsk(frame);
}

function stop() {
  if (!running) return;
  socket.send({ type: "generation.stop" });
  stopButton.disabled = true;
  setTimeout(() => { stopButton.disabled = false; }, 1500);
}
stopButton.addEventListener("click", stop);
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && running && !document.querySelector("dialog[open]")) stop();
});

// --- per-message actions -------------------------------------------------------------------
function askComment(title) {
  const dialog = document.getElementById("comment-dialog");
  dialog.querySelector("#comment-title").textContent = title;
  const area = dialog.querySelector("#comment-input");
  area.value = "";
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok" ? area.value.trim() : null), { once: true });
  });
}

const ACTIONS = {
  copy: (li) => copyText(li.dataset.raw ?? li.querySelector(".content").textContent),
  async fork(li) {
    const fork = await api("POST", `/conversations/${conversationId}/fork`, { from_message_id: li.dataset.id });
    location.href = `/conversations/${fork.id}/`;
  },
  up: (li, button) => rate(li, button, "up"),
  down: (li, button) => rate(li, button, "down"),
  async report(li) {
    const reason = await askComment(_("Report this message"));
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
    if (running) return;
    startAction({ type: "message.regenerate", message_id: li.dataset.id });
  },
  continue(li) {
    if (running) return;
    startAction({ type: "message.continue", message_id: li.dataset.id });
  },
  edit(li) {
    if (!running) openEditor(li);
  },
  switch(li, button) {
    if (button.dataset.target) socket.send({ type: "branch.switch", message_id: button.dataset.target });
  },
};

function startAction(frame) {
  showError("");
  setRunning(true);
  socket.send(frame);
}

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
  const close = () => { form.remove(); bubble.hidden = false; };
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
    if (!content || running) return;
    if (content === (li.dataset.raw ?? "").trim()) { close(); return; }
    close();
    sendAsk({ type: "message.edit", message_id: li.dataset.id, content, client_id: newClientId() });
  });
  area.focus();
  area.setSelectionRange(area.value.length, area.value.length);
}

// Show the current branch: the newest page of it, from the server.
let reloading = null;
let reloadAgain = false;
const arrivedWhileReloading = new Set();
function reloadBranch() {
  // Asked again while a reload is in flight: its page may predate what asked (a reply
  // stored meanwhile), so one more follows it.
  if (reloading) { reloadAgain = true; return reloading; }
  arrivedWhileReloading.clear();
  reloading = (async () => {
    try {
      const response = await fetch(root.dataset.fragmentUrl, { credentials: "same-origin" });
      if (!response.ok) throw new Error(String(response.status));
      const fragment = parseFragment(await response.text());
      const nodes = [...fragment.querySelectorAll("li.message")];
      // A message shown while the page was being fetched (a reply that finished meanwhile)
      // may be newer than the page: it stays, after it, unless the page has it.
      const fetched = new Set(nodes.map((node) => node.dataset.id));
      const idOf = (li) => li.dataset.id || li.id.replace(/^msg-/, "");
      const later = messageItems().filter((li) => arrivedWhileReloading.has(idOf(li)) && !fetched.has(idOf(li)));
      for (const li of messageItems()) if (li !== streaming && !later.includes(li)) li.remove();
      const before = later[0] || (streaming && streaming.parentElement === list ? streaming : null);
      for (const node of nodes) {
        node.dataset.final = "1";
        socket.seen.add(node.dataset.id);
        list.insertBefore(node, before);
      }
      remember(list);
      enhance(list);
      older.hidden = response.headers.get("X-Has-Older") !== "1";
      // What the branch holds beyond this page, for the header's counts.
      root.dataset.hiddenMessages = response.headers.get("X-Hidden-Messages") || "0";
      root.dataset.hiddenTokens = response.headers.get("X-Hidden-Tokens") || "0";
      root.dataset.hiddenEstimated = response.headers.get("X-Hidden-Estimated") || "0";
      scrollToBottom();
    } catch {
      toast(_("Could not show that branch; reload the page."), { error: true });
    } finally {
      reloading = null;
      if (reloadAgain) { reloadAgain = false; reloadBranch(); }
    }
  })();
  return reloading;
}

async function rate(li, button, rating) {
  const comment = await askComment(rating === "up" ? _("What was good? (optional)") : _("What went wrong? (optional)"));
  if (comment === null) return;
  await api("POST", `/messages/${li.dataset.id}/feedback`, { rating, comment });
  for (const b of li.querySelectorAll('[data-action="up"], [data-action="down"]')) b.setAttribute("aria-pressed", String(b === button));
  toast(_("Thanks for the feedback."));
}

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

// --- header ------------------------------------------------------------------------------
const { updateHeader } = initHeader(root, conversationId);

// --- older messages ---------------------------------------------------------------------------
const older = document.getElementById("older");
let loadingOlder = false;

async function loadOlder() {
  if (loadingOlder || older.hidden) return;
  const first = messageItems()[0];
  if (!first) return;
  loadingOlder = true;
  try {
    const response = await fetch(`${root.dataset.fragmentUrl}?before=${first.dataset.seq}`, { credentials: "same-origin" });
    if (!response.ok) throw new Error(String(response.status));
    const fragment = parseFragment(await response.text());
    const height = scroller.scrollHeight;
    const top = scroller.scrollTop;
    let loaded = 0;
    let loadedTokens = 0;
    for (const node of fragment.querySelectorAll("li.message")) {
      if (document.getElementById(node.id)) continue;
      node.dataset.final = "1";
      socket.seen.add(node.dataset.id);
      list.insertBefore(node, first);
      loaded += 1;
      loadedTokens += Number(node.dataset.tokens) || 0;
    }
    // Shown now, so no longer among those the header counts as left out.
    root.dataset.hiddenMessages = Math.max(0, (Number(root.dataset.hiddenMessages) || 0) - loaded);
    root.dataset.hiddenTokens = Math.max(0, (Number(root.dataset.hiddenTokens) || 0) - loadedTokens);
    remember(list);
    enhance(list);
    scroller.scrollTop = top + (scroller.scrollHeight - height);
    older.hidden = response.headers.get("X-Has-Older") !== "1";
  } catch {
    toast(_("Could not load older messages."), { error: true });
  } finally {
    loadingOlder = false;
  }
}
document.getElementById("load-older").addEventListener("click", loadOlder);

// --- start -----------------------------------------------------------------------------------
remember(list);
enhance(list);
renderRich(document.getElementById("summary-text"));
for (const li of messageItems()) li.dataset.final = "1";
const target = location.hash.startsWith("#msg-") ? document.getElementById(location.hash.slice(1)) : null;
if (target) {
  target.classList.add("highlighted");
  target.scrollIntoView({ block: "center" });
} else {
  scrollToBottom();
}
if ("IntersectionObserver" in window) {
  // Only after the first scroll, so landing at the bottom doesn't load older pages at once.
  setTimeout(() => {
    new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) loadOlder();
    }, { root: scroller, rootMargin: "200px 0px 0px 0px" }).observe(older);
  }, 500);
}
composer.autosize();
renderQueue();
socket.connect();
window.chatSocket = socket; // for debugging and the browser tests
