// The conversation page: live chat over the socket, the composer and the header. The
// message list (messages.js), the buttons under each message (message_actions.js) and
// the queue of messages written while a reply runs (queue.js) are their own modules.
import { initComposer, newClientId } from "./composer.js";
import { _, budgetText, format } from "./i18n.js";
import { share } from "./live.js";
import { initHeader } from "./header.js";
import { initMessageActions } from "./message_actions.js";
import { initMessages } from "./messages.js";
import { initQueue } from "./queue.js";
import { ConversationSocket } from "./socket.js";

const root = document.getElementById("conversation");
const input = document.getElementById("composer-input");
const sendButton = document.getElementById("send-button");
const stopButton = document.getElementById("stop-button");
const banner = document.getElementById("connection-banner");
const errorBanner = document.getElementById("error-banner");
const conversationId = root.dataset.id;

let running = false;
let pendingSend = null; // text of a sent message not yet acknowledged

const messages = initMessages(root, { markSeen: (id) => socket.seen.add(id) });

// --- state -----------------------------------------------------------------------------
// While a reply runs the box stays open: what is sent meanwhile waits in the queue.
function setRunning(value) {
  running = value;
  stopButton.hidden = !value;
  root.classList.toggle("running", value);
  showSendButton();
  if (!value && !pendingSend) {
    if (document.activeElement === document.body || document.activeElement === stopButton) input.focus();
    queue.flush();
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
  budget_exceeded: (frame) => budgetText(frame.retry_after),
};

// --- socket ----------------------------------------------------------------------------
const socket = new ConversationSocket(root.dataset.wsPath, {
  lastSeq: messages.maxSeq(),
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
      if (message.role === "user" && pendingSend !== null) {
        pendingSend = null;
        showError("");
        if ((message.attachments || []).length) composer.clearFiles(message.attachments.map((a) => a.id));
      }
      messages.show(message);
    },
    onStarted(run) {
      pendingSend = null;
      setRunning(true);
      messages.ensureStreaming(run);
    },
    onText(run) {
      messages.showText(run);
    },
    onReasoning(run) {
      messages.showReasoning(run);
    },
    onThinking(frame) {
      messages.showStep(frame);
    },
    onSources(frame) {
      messages.showSources(frame);
    },
    onFinished(frame) {
      if (!socket.running) setRunning(false); // side by side: once both have ended
      if (!frame.message) messages.dropEmptyReply(frame.run_id);
    },
    onIdle() {
      if (!pendingSend) { setRunning(false); messages.dropEmptyReply(); }
      queue.flush();
    },
    onConversation(conversation) {
      if ("current_message_id" in conversation && (conversation.current_message_id || null) !== messages.shownLeaf()) {
        messages.reloadBranch();
      }
      updateHeader(conversation);
      share({ type: "conversation.updated", conversation });
    },
    onDeleted() {
      share({ type: "conversation.deleted", conversation_id: conversationId });
      location.href = root.dataset.homeUrl;
    },
    textOf(messageId) {
      return messages.textOf(messageId);
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
      if (pendingSend !== null) messages.dropEmptyReply(); // refused: no reply is coming
      if (frame.code === "busy" && pendingSend !== null && lastAsk?.type === "message.send") {
        // Another tab's reply is running: this one waits its turn, never lost.
        queue.enqueue(lastAsk, { front: true });
        pendingSend = null;
        return;
      }
      showError((ERROR_TEXT[frame.code] || (() => frame.detail || _("Something went wrong.")))(frame));
      if (pendingSend !== null) {
        if (!input.value) composer.setText(pendingSend);
        pendingSend = null;
        if (frame.code !== "busy") setRunning(false);
      }
    },
  },
});
for (const li of messages.items()) socket.seen.add(li.dataset.id);

// --- composer: sends at once, or queues while a reply runs --------------------------------
const composer = initComposer({
  uploadPath: () => `/conversations/${conversationId}/attachments`,
  onSubmit(content) {
    const frame = { type: "message.send", content, client_id: newClientId() };
    const ids = composer.attachmentIds();
    if (ids.length) frame.attachments = ids;
    const pair = sideBySide();
    if (pair) frame.models = pair;
    if (running || pendingSend !== null || queue.length) {
      queue.enqueue(frame);
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
  const mine = messages.items().filter((li) => li.dataset.role === "user");
  if (!mine.length) return;
  event.preventDefault();
  actions.openEditor(mine[mine.length - 1]);
});

// The last message.send / message.edit frame: a `sensitive` answer offers to resend it.
let lastAsk = null;
function sendAsk(frame) {
  lastAsk = frame;
  composer.hideSensitive();
  pendingSend = frame.content;
  if (frame.type === "message.send") {
    composer.setText("");
    messages.ensureStreaming(); // the reply's bubble, pulsing, at once: not after the claim
  }
  startAction(frame);
}

const queue = initQueue(conversationId, {
  composer,
  input,
  canSend: () => !running && pendingSend === null && socket.isOpen,
  send: sendAsk,
});

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

function startAction(frame) {
  showError("");
  setRunning(true);
  socket.send(frame);
}

// --- side by side: a second model answers each message too, until switched off ---------------
const compare = document.getElementById("compare-select");
const compareKey = `compare:${conversationId}`;
if (compare) {
  compare.value = localStorage.getItem(compareKey) || "";
  if (compare.selectedIndex < 0) compare.value = "";
  compare.addEventListener("change", () => {
    if (compare.value) localStorage.setItem(compareKey, compare.value);
    else localStorage.removeItem(compareKey);
    showCompare();
  });
}
// The conversation's model and the one compared with it (none: one reply, as usual).
function sideBySide() {
  if (!compare || !compare.value) return null;
  const picker = document.getElementById("model-select");
  const own = (picker && picker.value) || root.dataset.defaultModel;
  return own && own !== compare.value ? [own, compare.value] : null;
}
// The box says who answers while two do.
const placeholder = input.placeholder;
function showCompare() {
  const pair = sideBySide();
  input.placeholder = pair ? format(_("Ask %(a)s and %(b)s side by side"), { a: pair[0], b: pair[1] }) : placeholder;
}
document.getElementById("model-select")?.addEventListener("change", showCompare);
showCompare();
// "Keep this" under one of a pair: the branch goes on from it.
root.addEventListener("click", (event) => {
  const keep = event.target.closest(".lane-keep");
  if (!keep) return;
  const li = keep.closest("li.lane");
  if (li.dataset.aside) socket.send({ type: "branch.switch", message_id: keep.dataset.id });
  else messages.keepOnly(keep.dataset.id);
});

// --- per-message actions -------------------------------------------------------------------
const actions = initMessageActions(conversationId, {
  isRunning: () => running,
  startAction,
  sendAsk,
  send: (frame) => socket.send(frame),
  reloadBranch: messages.reloadBranch,
});

// --- header ------------------------------------------------------------------------------
const { updateHeader } = initHeader(root, conversationId);

// --- start -----------------------------------------------------------------------------------
messages.start();
// A reply was being written when the page was made (a new chat's first one): show it is
// coming at once; the socket's state then streams it, or says it has ended.
if (root.dataset.replying === "1") { setRunning(true); messages.ensureStreaming(); }
composer.autosize();
queue.render();
socket.connect();
window.chatSocket = socket; // for debugging and the browser tests
