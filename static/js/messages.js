// The conversation page's message list: stored messages in sequence order, the reply
// streaming in, and the pages of the branch fetched from the server.
import { copyText, el, parseFragment, toast } from "./dom.js";
import { _, format, ngettext } from "./i18n.js";
import { artifactKind, previewButton } from "./artifacts.js";
import { initLanes } from "./lanes.js";
import { renderRich } from "./rich.js";
import { stepText } from "./steps.js";

// `markSeen(id)`: a message the page shows, so the socket's replay skips it.
export function initMessages(root, { markSeen }) {
  const list = document.getElementById("messages");
  const scroller = document.getElementById("scroller");
  const liveRegion = document.getElementById("live-region");
  const older = document.getElementById("older");
  // The replies in progress: the bubble shown at once for a sent message (before its run
  // is known), then one <li> per run: one, or two side by side (lanes).
  let waiting = null;
  const streams = new Map(); // run id -> <li>
  const isStreaming = (li) => li === waiting || (li.dataset.run && streams.get(li.dataset.run) === li);
  const firstStreaming = () => waiting || streams.values().next().value || null;
  const lanes = initLanes(list, isStreaming);

  // --- rendering -----------------------------------------------------------------------
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

  // The newest message shown: the leaf of the branch on the page (a side-by-side reply
  // not on the branch stands beside it, "aside").
  function shownLeaf() {
    const items = messageItems().filter((li) => !isStreaming(li) && !li.dataset.aside);
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
      const source = pre.textContent;
      const kind = artifactKind(language ? language.slice(9) : "", source);
      if (kind) Object.assign(wrap.dataset, { artifact: kind, source });
      wrap.append(el("div", { className: "code-head" },
        el("span", { text: language ? language.slice(9) : "" }), kind ? previewButton(kind, source) : null, button), pre);
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
    const after = messageItems().find((li) => Number(li.dataset.seq) > seq && !isStreaming(li));
    const streaming = firstStreaming();
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
    const replacing = message.role === "assistant"
      ? streams.get(message.id) || (!streams.size ? waiting : null) : null;
    // The placeholder carries the message's id: until its fragment arrives it is the leaf
    // shown (shownLeaf), and the reply to it must be seen to follow it. It carries its counts
    // too: the header adds up what the list shows.
    const placeholder = replacing || el("li", {
      className: `message ${message.role} loading`, id: `msg-${message.id}`,
      "data-id": message.id, "data-seq": message.sequence_number,
    }, el("div", { className: "bubble" }, el("div", { className: "content plain", text: message.content })));
    placeholder.dataset.tokens = message.tokens_used || 0;
    if (tokensEstimated(message)) placeholder.dataset.tokensEstimated = "1";
    if (replacing) {
      if (replacing === waiting) waiting = null;
      streams.delete(message.id);
      lanes.stored(replacing);
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
      lanes.carry(placeholder, node);
      enhance(node);
      placeholder.replaceWith(node);
      if (stick) scrollToBottom();
    } catch {
      placeholder.classList.remove("loading"); // keep the plain text; a reload shows the rest
    }
    if (message.role === "assistant") liveRegion.textContent = _("Reply received.");
  }

  // A stored message from the socket. One that does not follow the branch shown (an edit,
  // another tab's switch): show the current branch instead.
  function show(message) {
    texts.set(message.id, message.content);
    if (message.role === "user") lanes.dropAside();
    const follows = (message.parent_id || null) === shownLeaf();
    if (!follows && !document.getElementById(`msg-${message.id}`)) reloadBranch();
    else {
      if (reloading) arrivedWhileReloading.add(message.id);
      showStored(message);
    }
  }

  // --- the replies in progress ------------------------------------------------------------
  function streamingItem() {
    return el("li", { className: "message assistant streaming", "aria-busy": "true" },
      el("ol", { className: "live-steps", "aria-label": _("Working…") }),
      el("div", { className: "bubble" },
        el("span", { className: "visually-hidden", text: _("Assistant is replying:") }),
        el("div", { className: "content plain stream-text" }),
        el("span", { className: "cursor", "aria-hidden": "true" })));
  }

  // The bubble of a run's reply (`run` unknown yet: the one shown at once for a send). A
  // second run answering the same message stands beside the first: side by side.
  function ensureStreaming(run) {
    if (!run) {
      if (!waiting && !streams.size) append(waiting = streamingItem());
      return firstStreaming();
    }
    let li = streams.get(run.id);
    if (li) return li;
    if (waiting) { li = waiting; waiting = null; } else append(li = streamingItem());
    li.id = `msg-${run.id}`; // the reply's id is its run's
    li.dataset.run = run.id;
    li.dataset.replyTo = run.replyTo || "";
    streams.set(run.id, li);
    const partner = run.replyTo && [...streams.values()].find((other) => other !== li && other.dataset.replyTo === run.replyTo);
    if (partner) lanes.pair(partner, li, run.model);
    li.dataset.model = run.model || "";
    return li;
  }

  function append(li) {
    const stick = nearBottom();
    list.append(li);
    if (stick) scrollToBottom();
  }

  function streamOf(frame) {
    return ensureStreaming(frame.run_id ? { id: frame.run_id } : undefined);
  }

  function showText(run) {
    const node = ensureStreaming(run);
    const stick = nearBottom();
    node.querySelector(".stream-text").textContent = run.text;
    if (run.text) foldReasoning(node);
    if (stick) scrollToBottom();
  }

  // The model's reasoning while it streams: open under "Thinking…", then folded under
  // "Thought for N seconds" once the answer starts (unless the person opened it again).
  function showReasoning(run) {
    const node = ensureStreaming(run);
    const stick = nearBottom();
    let box = node.querySelector("details.reasoning");
    if (!box) {
      box = el("details", { className: "reasoning live", open: true },
        el("summary", {}, el("span", { className: "reasoning-label", text: _("Thinking…") })),
        el("div", { className: "reasoning-body plain" }));
      box.dataset.started = String(Date.now());
      node.querySelector(".stream-text").before(box);
    }
    box.querySelector(".reasoning-body").textContent = run.reasoning ? run.reasoning.text : "";
    if (run.text) foldReasoning(node);
    if (stick) scrollToBottom();
  }

  function foldReasoning(node) {
    const box = node.querySelector("details.reasoning.live");
    if (!box || box.dataset.folded) return;
    box.dataset.folded = "1";
    const seconds = Math.max(1, Math.round((Date.now() - Number(box.dataset.started)) / 1000));
    box.querySelector(".reasoning-label").textContent = format(
      ngettext("Thought for %(n)s second", "Thought for %(n)s seconds", seconds), { n: seconds });
    box.open = false;
  }

  // Steps that count (waiting for the model: 10 s, 20 s…) update their own line.
  const COUNTING = new Set(["model.waiting", "model.busy"]);
  const MEMORY_CHANGES = new Set(["tool.remember.done", "tool.forget.done"]); // steps.py's

  function showStep(frame) {
    const node = streamOf(frame);
    if (MEMORY_CHANGES.has(frame.code) && !node.querySelector(".memory-chip")) {
      node.querySelector(".bubble").after(el("a", { className: "chip memory-chip", href: "/memories/" },
        el("span", { text: _("Memory updated") })));
    }
    const text = stepText(frame);
    if (!text) return;
    const steps = node.querySelector(".live-steps");
    const same = COUNTING.has(frame.code) ? steps.querySelector(`li[data-code="${frame.code}"]`) : null;
    if (same) { same.textContent = text; return; }
    steps.append(el("li", { className: `step step-${frame.step}`, "data-code": frame.code || "", text }));
  }

  // The reply's sources as they come (a tool may add more): numbered chips under the bubble,
  // as the stored reply shows them (_message.html), which replaces this one when it ends.
  function showSources(frame) {
    const node = streamOf(frame);
    let chips = node.querySelector("ol.sources");
    if (!chips) {
      chips = el("ol", { className: "sources", "aria-label": _("Sources") });
      node.querySelector(".bubble").after(chips);
    }
    for (const s of frame.items || []) {
      const n = Number.isInteger(s.n) ? String(s.n) : "";
      // A tool call answered again from this turn's result announces the same source again.
      const known = [...chips.querySelectorAll(".source")]
        .some((c) => c.dataset.n === n && (c.getAttribute("href") || "") === (s.url || ""));
      if (known) continue;
      const parts = [n ? el("span", { className: "n", text: n }) : null,
        el("span", { className: "source-name", text: s.title || s.document_title || s.document_id || "" })];
      if (s.section) parts.push(el("span", { className: "source-section", text: s.section }));
      // Only our own relative links or web pages: a source never becomes a javascript: URL.
      const url = typeof s.url === "string" ? s.url : "";
      const safe = (url.startsWith("/documents/") && !url.includes("//")) || /^https?:\/\//.test(url);
      chips.append(el("li", {}, safe
        ? el("a", { className: "source", "data-n": n, href: url, target: "_blank", rel: "noopener noreferrer" }, ...parts)
        : el("span", { className: "source", "data-n": n }, ...parts)));
    }
  }

  // Nothing was stored for the reply (stopped before any text): drop its bubble (`runId`
  // unknown: every bubble still empty).
  function dropEmptyReply(runId) {
    for (const [id, li] of [[null, waiting], ...streams]) {
      if (!li || (runId && id !== runId)) continue;
      if (li.querySelector(".stream-text").textContent) continue;
      li.remove();
      if (li === waiting) waiting = null;
      else streams.delete(id);
    }
    lanes.settle();
  }

  // --- pages of the branch ---------------------------------------------------------------
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
        for (const li of messageItems()) if (!isStreaming(li) && !later.includes(li)) li.remove();
        lanes.settle();
        const streaming = firstStreaming();
        const before = later[0] || (streaming && streaming.parentElement === list ? streaming : null);
        for (const node of nodes) {
          node.dataset.final = "1";
          markSeen(node.dataset.id);
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
        markSeen(node.dataset.id);
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

  // The page as the server rendered it: enhanced, scrolled to the linked message or the end.
  function start() {
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
  }

  return {
    items: messageItems,
    maxSeq,
    shownLeaf,
    textOf: (messageId) => texts.get(messageId),
    show,
    ensureStreaming,
    showText,
    showReasoning,
    showStep,
    showSources,
    dropEmptyReply,
    keepOnly: lanes.keepOnly,
    reloadBranch,
    start,
  };
}
