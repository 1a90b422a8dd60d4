// The queue of the conversation page: messages written while a reply runs, sent in order
// when it ends. Kept in sessionStorage, so a reload (or a new chat's first message with
// files) loses none.
import { el, toast } from "./dom.js";
import { _, format } from "./i18n.js";

// `canSend()`: whether the next frame may leave now; `send(frame)` sends it.
export function initQueue(conversationId, { composer, input, canSend, send }) {
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
    if (!queue.length || !canSend()) return;
    const frame = queue.shift();
    saveQueue();
    send(frame);
  }

  return {
    enqueue,
    flush: flushQueue,
    render: renderQueue,
    get length() { return queue.length; },
  };
}
