// The conversation websocket client (SPEC: WebSocket): reconnects by itself, catches up
// with `sync`, and stitches each reply in progress by token `index` (no gaps, no repeats):
// one at a time, or two side by side, each by its run id.

const FATAL_CODES = new Set([4401, 4403, 4404]);
const PING_EVERY_MS = 25000;
const MAX_BACKOFF_MS = 10000;
// Frames sent while disconnected go out on reconnect (sends and edits keep their client_id).
const QUEUED = new Set(["message.send", "message.edit", "message.regenerate", "message.continue",
  "generation.stop", "branch.switch"]);

export class ConversationSocket {
  /**
   * handlers: onOpen(), onClose(event, willRetry), onFatal(code), onMessage(message),
   * onStarted(run), onText(run), onThinking(frame), onSources(frame), onFinished(frame, run),
   * onIdle(), onConversation(conversation), onDeleted(), onError(frame),
   * textOf(messageId) → the stored text of a message the page shows (a continue starts with it)
   */
  constructor(path, { lastSeq = 0, handlers = {} } = {}) {
    this.url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${path}`;
    this.lastSeq = lastSeq;
    this.handlers = handlers;
    this.runs = new Map(); // run id -> {id, replyTo, model, text, pending: Map(index -> text)}
    this.seen = new Set();
    this.finishedRuns = new Set();
    this.queue = [];
    this.attempt = 0;
    this.closedByUs = false;
    this.ws = null;
  }

  connect() {
    this.closedByUs = false;
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.addEventListener("open", () => {
      this.attempt = 0;
      this.send({ type: "sync", after: this.lastSeq });
      for (const frame of this.queue.splice(0)) ws.send(JSON.stringify(frame));
      clearInterval(this.pinger);
      this.pinger = setInterval(() => this.send({ type: "ping" }), PING_EVERY_MS);
      this.call("onOpen");
    });
    ws.addEventListener("message", (event) => {
      let frame;
      try { frame = JSON.parse(event.data); } catch { return; }
      this.dispatch(frame);
    });
    ws.addEventListener("close", (event) => {
      clearInterval(this.pinger);
      if (this.ws !== ws) return;
      if (FATAL_CODES.has(event.code)) {
        this.call("onFatal", event.code);
        return;
      }
      const retry = !this.closedByUs;
      this.call("onClose", event, retry);
      if (retry) {
        const delay = Math.min(MAX_BACKOFF_MS, 500 * 2 ** this.attempt) * (0.75 + Math.random() / 2);
        this.attempt += 1;
        this.retryTimer = setTimeout(() => this.connect(), delay);
      }
    });
  }

  close() {
    this.closedByUs = true;
    clearTimeout(this.retryTimer);
    if (this.ws) this.ws.close();
  }

  get isOpen() {
    return this.ws && this.ws.readyState === WebSocket.OPEN;
  }

  // Frames sent while disconnected go out on reconnect; sends keep their client_id.
  send(frame) {
    if (this.isOpen) this.ws.send(JSON.stringify(frame));
    else if (QUEUED.has(frame.type)) this.queue.push(frame);
  }

  call(name, ...args) {
    const fn = this.handlers[name];
    if (fn) fn(...args);
  }

  dispatch(frame) {
    switch (frame.type) {
      case "message.created":
        this.stored(frame.message);
        break;
      case "generation.started":
        this.start(frame.run_id, frame);
        break;
      case "token":
        this.start(frame.run_id);
        this.stitch(frame.run_id, frame.index, frame.text);
        break;
      case "reasoning":
        this.start(frame.run_id);
        this.stitchReasoning(frame.run_id, frame.index, frame.text);
        break;
      case "thinking":
        this.start(frame.run_id);
        if (this.runs.has(frame.run_id)) this.call("onThinking", frame, this.runs.get(frame.run_id));
        break;
      case "sources":
        if (this.runs.has(frame.run_id)) this.call("onSources", frame, this.runs.get(frame.run_id));
        break;
      case "generation.finished":
        if (frame.message) this.stored(frame.message);
        this.finish(frame);
        break;
      case "sync.state":
        this.syncState(frame);
        break;
      case "conversation.updated":
        this.call("onConversation", frame.conversation);
        break;
      case "conversation.deleted":
        this.call("onDeleted");
        break;
      case "error":
        this.call("onError", frame);
        break;
      default:
        break; // pong and future frames
    }
  }

  stored(message) {
    if (!message || this.seen.has(message.id)) return;
    if (message.truncated) {
      // Too long for a frame: the server sent its beginning; read it whole over HTTP.
      this.seen.add(message.id);
      if (message.sequence_number > this.lastSeq) this.lastSeq = message.sequence_number;
      this.fetchWhole(message).then((whole) => {
        this.seen.delete(message.id);
        this.stored(whole);
      });
      return;
    }
    this.seen.add(message.id);
    if (message.sequence_number > this.lastSeq) this.lastSeq = message.sequence_number;
    // A reply's id is its run's: once stored, late chunks of that run are stale.
    const run = message.role === "assistant" ? this.runs.get(message.id) : null;
    if (run) {
      this.finishedRuns.add(run.id);
      this.runs.delete(run.id);
    }
    this.call("onMessage", message, run);
  }

  // The message as stored (its `truncated` copy if it cannot be read).
  async fetchWhole(message) {
    const url = `/api/v1/conversations/${message.conversation_id}/messages` +
      `?branch=all&after=${message.sequence_number - 1}&limit=1`;
    try {
      const answer = await fetch(url, { credentials: "same-origin" });
      const page = answer.ok ? await answer.json() : null;
      const whole = page && page.items && page.items[0];
      if (whole && whole.id === message.id) return whole;
    } catch (_) { /* offline: show what came */ }
    return { ...message, truncated: false };
  }

  // `about`: what generation.started (or sync.state) says of the run: reply_to, model,
  // continues. A continue's text starts with the cut-off reply's, its first index after it.
  start(runId, about = {}) {
    if (!runId || this.runs.has(runId) || this.finishedRuns.has(runId)) return;
    const continues = about.continues;
    const prefix = continues && this.handlers.textOf ? this.handlers.textOf(continues) || "" : "";
    const run = { id: runId, replyTo: about.reply_to, model: about.model || "", continues, text: prefix, pending: new Map() };
    this.runs.set(runId, run);
    this.call("onStarted", run);
  }

  get running() {
    return this.runs.size > 0;
  }

  // Put `text` at character offset `index` of the run's reply; buffer what arrives early.
  stitch(runId, index, text) {
    const run = this.runs.get(runId);
    if (!run || typeof index !== "number" || typeof text !== "string") return;
    const end = index + text.length;
    if (end <= run.text.length) return; // a repeat
    if (index > run.text.length) {
      run.pending.set(index, text); // a gap: wait for the missing piece (or sync.state)
      // Nothing yet (a continue of text we never had) or a long gap: ask for the whole.
      if (!run.syncing && (!run.text || run.pending.size > 50)) {
        run.syncing = true;
        this.send({ type: "sync", after: this.lastSeq });
      }
      return;
    }
    run.text += text.slice(run.text.length - index);
    this.drain(run);
    this.call("onText", run);
  }

  // The model's reasoning: shown as it comes. A piece past a gap waits for the pieces
  // before it; nothing is asked again for it (the stored reply holds the whole).
  stitchReasoning(runId, index, text) {
    const run = this.runs.get(runId);
    if (!run || typeof index !== "number" || typeof text !== "string") return;
    if (!run.reasoning) run.reasoning = { text: "", pending: new Map() };
    const reasoning = run.reasoning;
    if (index > reasoning.text.length) { reasoning.pending.set(index, text); return; }
    if (index + text.length <= reasoning.text.length) return; // a repeat
    reasoning.text += text.slice(reasoning.text.length - index);
    this.drainReasoning(run);
  }

  drainReasoning(run) {
    const reasoning = run.reasoning;
    let progressed = true;
    while (progressed && reasoning.pending.size) {
      progressed = false;
      for (const [at, piece] of reasoning.pending) {
        if (at <= reasoning.text.length) {
          reasoning.pending.delete(at);
          if (at + piece.length > reasoning.text.length) reasoning.text += piece.slice(reasoning.text.length - at);
          progressed = true;
        }
      }
    }
    this.call("onReasoning", run);
  }

  drain(run) {
    let progressed = true;
    while (progressed && run.pending.size) {
      progressed = false;
      for (const [index, text] of run.pending) {
        if (index <= run.text.length) {
          run.pending.delete(index);
          if (index + text.length > run.text.length) run.text += text.slice(run.text.length - index);
          progressed = true;
        }
      }
    }
  }

  syncState(frame) {
    for (const message of frame.messages || []) this.stored(message);
    // A page of a long history: ask for the next (lastSeq now ends this page).
    if (frame.has_more) this.send({ type: "sync", after: this.lastSeq });
    const generations = frame.generations || (frame.generation ? [frame.generation] : []);
    const live = new Set();
    for (const generation of generations) {
      if (!generation || !generation.run_id) continue;
      live.add(generation.run_id);
      this.start(generation.run_id, generation);
      const run = this.runs.get(generation.run_id);
      if (!run) continue;
      run.syncing = false;
      const thought = generation.reasoning || "";
      if (thought && thought.length > ((run.reasoning && run.reasoning.text.length) || 0)) {
        const pending = (run.reasoning && run.reasoning.pending) || new Map();
        run.reasoning = { text: thought, pending };
        this.drainReasoning(run); // what came before the snapshot, and after it
      }
      const text = generation.text || "";
      if (text.length > run.text.length) {
        run.text = text;
        this.drain(run);
      }
      this.call("onText", run);
    }
    // The replies that ended while we were away: their messages came in `messages`.
    const ended = [...this.runs.values()].filter((run) => !live.has(run.id));
    for (const run of ended) this.finish({ run_id: run.id });
    if (!this.runs.size && !ended.length) this.call("onIdle");
  }

  finish(frame) {
    if (frame.run_id) this.finishedRuns.add(frame.run_id);
    const run = frame.run_id ? this.runs.get(frame.run_id) : null;
    if (run) this.runs.delete(run.id);
    this.call("onFinished", frame, run);
  }
}
