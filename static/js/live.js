// Conversation list events for list pages: `conversation.updated` / `conversation.deleted`
// frames from the user's websocket when the server offers one (body[data-user-ws]),
// otherwise by polling the API; frames seen by other tabs arrive via BroadcastChannel.
import { api } from "./api.js";

const POLL_MS = 10000;
const listeners = new Set();
const channel = "BroadcastChannel" in window ? new BroadcastChannel("chat-events") : null;
let started = false;

function emit(frame) {
  for (const listener of listeners) listener(frame);
}

// Tell other tabs of this browser about a frame this tab saw (e.g. on a conversation socket).
export function share(frame) {
  if (channel) channel.postMessage(frame);
}

export function onListEvent(listener) {
  listeners.add(listener);
  if (!started) start();
  return () => listeners.delete(listener);
}

function start() {
  started = true;
  if (channel) channel.addEventListener("message", (event) => emit(event.data));
  const path = document.body.dataset.userWs;
  if (path) connectSocket(path, 0);
  else poll();
}

function connectSocket(path, attempt) {
  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${path}`);
  ws.addEventListener("open", () => { attempt = 0; });
  ws.addEventListener("message", (event) => {
    try {
      const frame = JSON.parse(event.data);
      if (frame.type === "conversation.updated" || frame.type === "conversation.deleted") emit(frame);
    } catch { /* ignore */ }
  });
  ws.addEventListener("close", (event) => {
    if (event.code >= 4400 && event.code < 4500) { poll(); return; }
    setTimeout(() => connectSocket(path, attempt + 1), Math.min(10000, 500 * 2 ** attempt));
  });
}

let snapshot = null;

async function poll() {
  try {
    const page = await api("GET", "/conversations?sort=updated_at&order=desc&limit=60");
    const next = new Map(page.items.map((c) => [c.id, c]));
    if (snapshot) {
      for (const [id, c] of next) {
        const before = snapshot.get(id);
        if (!before || before.updated_at !== c.updated_at || before.title !== c.title || before.status !== c.status) {
          emit({ type: "conversation.updated", conversation: c });
        }
      }
      for (const id of snapshot.keys()) {
        if (!next.has(id)) emit({ type: "conversation.deleted", conversation_id: id, maybe: true });
      }
    }
    snapshot = next;
  } catch { /* the API may be down for a moment; try again later */ }
  setTimeout(poll, document.hidden ? POLL_MS * 3 : POLL_MS);
}
