// Artifacts: an html, svg or mermaid code block of a reply gets "Preview", which opens it
// beside the chat (over its lower part on a phone) in a sandboxed frame of its own origin
// (conversations/artifact_frame.py: no cookies, storage, API or top navigation, and no
// network unless allowed here). Copy, Download, and the versions: every block of the same
// kind in the conversation, oldest first, so a later reply's change is one step away.
import { copyText, el } from "./dom.js";
import { _, format } from "./i18n.js";

const KINDS = { html: "html", svg: "svg", mermaid: "mermaid", xml: "svg" };
const EXTENSIONS = { html: ["html", "text/html"], svg: ["svg", "image/svg+xml"], mermaid: ["mmd", "text/plain"] };
const LABELS = { html: "HTML", svg: "SVG", mermaid: "Mermaid" };

let panel = null;
let state = null; // {kind, versions, index, network}

export function artifactKind(language, source) {
  const kind = KINDS[language];
  if (kind === "svg" && !/^\s*(<\?xml[^>]*>\s*)?<svg[\s>]/i.test(source)) return null;
  return kind || null;
}

export function previewButton(kind, source) {
  const button = el("button", { type: "button", className: "preview-code", text: _("Preview"), "data-artifact": kind });
  button.addEventListener("click", () => open(kind, source, button));
  return button;
}

function versionsOf(kind) {
  const sources = [...document.querySelectorAll(`#messages .code-block[data-artifact="${kind}"]`)].map((b) => b.dataset.source);
  return sources.length ? sources : [];
}

function open(kind, source, opener) {
  const versions = versionsOf(kind);
  let index = versions.lastIndexOf(source);
  if (index < 0) { versions.push(source); index = versions.length - 1; }
  state = { kind, versions, index, network: false, opener };
  build();
  show();
}

function build() {
  if (panel) return;
  panel = document.getElementById("artifact-panel");
  panel.querySelector(".artifact-versions").addEventListener("click", (event) => {
    const step = Number(event.target.closest("[data-step]")?.dataset.step || 0);
    if (!step || !state) return;
    state.index = Math.min(state.versions.length - 1, Math.max(0, state.index + step));
    show();
  });
  panel.querySelector("#artifact-network").addEventListener("change", (event) => { state.network = event.target.checked; show(); });
  panel.querySelector("#artifact-copy").addEventListener("click", () => copyText(current()));
  panel.querySelector("#artifact-download").addEventListener("click", download);
  panel.querySelector("#artifact-close").addEventListener("click", close);
  panel.addEventListener("keydown", (event) => { if (event.key === "Escape") close(); });
  resizable(panel.querySelector(".artifact-resize"));
}

const current = () => state.versions[state.index];

function show() {
  const { kind, versions, index, network } = state;
  panel.querySelector("#artifact-title").textContent = format(_("Preview · %(kind)s"), { kind: LABELS[kind] });
  panel.querySelector(".artifact-version").textContent = format(_("%(n)s of %(total)s"), { n: index + 1, total: versions.length });
  const [previous, next] = panel.querySelectorAll(".artifact-versions button");
  previous.disabled = index === 0;
  next.disabled = index === versions.length - 1;
  panel.querySelector(".artifact-versions").hidden = versions.length < 2;
  panel.querySelector("#artifact-network").checked = network;
  // A new frame for each showing: nothing of the version before stays running.
  const frame = el("iframe", {
    className: "artifact-frame",
    title: format(_("Preview · %(kind)s"), { kind: LABELS[kind] }),
    sandbox: "allow-scripts",
    referrerpolicy: "no-referrer",
    src: `/artifacts/frame/${network ? "?network=1" : ""}`,
  });
  const source = current();
  const ready = (event) => {
    if (event.source !== frame.contentWindow || event.data?.type !== "artifact-frame-ready") return;
    removeEventListener("message", ready);
    frame.contentWindow.postMessage({ type: "artifact", kind, source }, "*");
  };
  addEventListener("message", ready);
  panel.querySelector(".artifact-frame-wrap").replaceChildren(frame);
  document.getElementById("conversation").classList.add("has-artifact");
  panel.hidden = false;
  panel.focus();
}

function close() {
  if (!panel) return;
  panel.hidden = true;
  panel.querySelector(".artifact-frame-wrap").replaceChildren();
  document.getElementById("conversation").classList.remove("has-artifact");
  state?.opener?.focus();
}

function download() {
  const [extension, type] = EXTENSIONS[state.kind];
  const url = URL.createObjectURL(new Blob([current()], { type }));
  const link = el("a", { href: url, download: `artifact-${state.index + 1}.${extension}` });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// Drag the left edge (or use the arrow keys on it) to make the preview wider or narrower.
function resizable(handle) {
  const root = document.getElementById("conversation");
  const setWidth = (px) => {
    const width = Math.round(Math.min(window.innerWidth * 0.75, Math.max(280, px)));
    root.style.setProperty("--artifact-w", `${width}px`);
    panel.style.setProperty("--artifact-w", `${width}px`);
    handle.setAttribute("aria-valuenow", String(Math.round((100 * width) / window.innerWidth)));
  };
  handle.addEventListener("pointerdown", (event) => {
    handle.setPointerCapture(event.pointerId);
    const move = (e) => setWidth(window.innerWidth - e.clientX);
    handle.addEventListener("pointermove", move);
    handle.addEventListener("pointerup", () => handle.removeEventListener("pointermove", move), { once: true });
  });
  handle.addEventListener("keydown", (event) => {
    const width = panel.getBoundingClientRect().width;
    if (event.key === "ArrowLeft") setWidth(width + 40);
    else if (event.key === "ArrowRight") setWidth(width - 40);
    else return;
    event.preventDefault();
  });
}
