// Side by side: two replies answering one message stand in two columns ("lanes") of the
// message list, each named by its model; the first stored is where the branch goes on, the
// other stands aside with "Keep this" until the person chooses or asks on.
import { el } from "./dom.js";
import { _, format } from "./i18n.js";

// `list`: the message list; `isStreaming(li)`: whether a bubble is still a reply in progress.
export function initLanes(list, isStreaming) {
  const lanes = () => list.querySelectorAll(":scope > li.lane");

  // The grid stays only while a pair is shown.
  function settle() {
    if (!list.querySelector(":scope > li.lane")) list.classList.remove("has-pair");
  }

  // Two runs answer the same message: the first bubble goes left, the new one right.
  function pair(first, second, model) {
    mark(first, 0, first.dataset.model || "");
    mark(second, 1, model);
  }

  // One of a pair: its model named above it.
  function mark(li, lane, model) {
    li.classList.add("lane");
    li.dataset.lane = String(lane);
    list.classList.add("has-pair");
    if (li.querySelector(".lane-head")) return;
    li.prepend(el("div", { className: "lane-head" },
      el("span", { className: "lane-model", text: model || _("Default model") })));
  }

  // A lane's reply is stored: the second of the pair stored stands aside.
  function stored(li) {
    if (!li.dataset.lane) return;
    const partnerStored = [...lanes()].some((other) =>
      other !== li && other.dataset.replyTo === li.dataset.replyTo && other.dataset.stored);
    if (partnerStored) li.dataset.aside = "1";
    li.dataset.stored = "1";
  }

  // A lane's stored reply (`node`, fetched) takes the bubble's place, model and side, and
  // gains "Keep this".
  function carry(bubble, node) {
    if (!bubble.dataset.lane) return;
    for (const key of ["lane", "replyTo", "model", "aside", "stored"]) {
      if (bubble.dataset[key] !== undefined) node.dataset[key] = bubble.dataset[key];
    }
    node.classList.add("lane");
    const head = bubble.querySelector(".lane-head") || el("div", { className: "lane-head" });
    const model = head.querySelector(".lane-model")?.textContent || "";
    head.replaceChildren(el("span", { className: "lane-model", text: model }),
      el("button", { type: "button", className: "lane-keep", "data-id": node.dataset.id,
        "aria-label": format(_("Keep the answer of %(model)s"), { model }), text: _("Keep this") }));
    node.prepend(head);
  }

  // The person kept one of a pair: the other leaves the view (a sibling version still).
  function keepOnly(id) {
    for (const li of lanes()) {
      if (li.dataset.id === id) {
        li.classList.remove("lane");
        delete li.dataset.lane;
        delete li.dataset.aside;
        li.querySelector(".lane-head")?.remove();
      } else if (!isStreaming(li)) li.remove();
    }
    settle();
  }

  // The next question goes on from the reply kept: the one aside steps out of view (it stays
  // a sibling version).
  function dropAside() {
    for (const li of list.querySelectorAll(":scope > li[data-aside]")) li.remove();
  }

  return { pair, stored, carry, keepOnly, dropAside, settle };
}
