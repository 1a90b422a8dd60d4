// Read a reply aloud: the model server's voice (POST /api/v1/audio/speech) when the site
// has one, else the browser's own speech synthesis, in the reply's language. Markdown is
// read as words: a code block is named, not spelled; a formula is named. Pressing again,
// or reading another reply, stops the one being read.
import { ApiError, csrfToken } from "./api.js";
import { _, format } from "./i18n.js";

let playing = null; // {button, stop}

function finish(button) {
  button.setAttribute("aria-pressed", "false");
  button.setAttribute("aria-label", _("Read aloud"));
  if (playing?.button === button) playing = null;
}

// The reply's words in reading order, one block a line.
export function wordsOf(content) {
  const copy = content.cloneNode(true);
  for (const pre of copy.querySelectorAll("pre")) {
    const language = (pre.querySelector("code")?.className.match(/language-([\w+#.-]+)/) || [])[1];
    const said = language ? format(_("A code block in %(language)s."), { language }) : _("A code block.");
    pre.replaceWith(Object.assign(document.createElement("p"), { textContent: said }));
  }
  for (const math of copy.querySelectorAll(".math, .katex-display, .katex")) {
    math.replaceWith(document.createTextNode(` ${_("a formula")} `));
  }
  for (const skip of copy.querySelectorAll(".sources, sup, button, .copy-code, .mermaid-frame, iframe")) skip.remove();
  const blocks = [...copy.querySelectorAll("p, li, h1, h2, h3, h4, h5, h6, td, th, blockquote > p")];
  const lines = (blocks.length ? blocks : [copy]).map((b) => b.textContent.replace(/\s+/g, " ").trim());
  return lines.filter(Boolean);
}

function languageOf(text) {
  return /[\uac00-\ud7a3]/.test(text) ? "ko-KR" : (document.documentElement.lang === "ko" ? "ko-KR" : "en-US");
}

function speakInBrowser(lines, button) {
  if (!window.speechSynthesis) throw new Error(_("This browser cannot read aloud."));
  speechSynthesis.cancel();
  const utterances = lines.map((line) => Object.assign(new SpeechSynthesisUtterance(line), { lang: languageOf(line) }));
  const last = utterances.at(-1);
  if (last) last.onend = last.onerror = () => finish(button);
  for (const u of utterances) speechSynthesis.speak(u);
  return () => speechSynthesis.cancel();
}

async function speakOnServer(messageId, button) {
  const response = await fetch("/api/v1/audio/speech", {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", Accept: "audio/wav, application/json", "X-CSRFToken": csrfToken() },
    body: JSON.stringify({ message_id: messageId }),
  });
  if (!response.ok) {
    const error = ((await response.json().catch(() => null)) || {}).error || {};
    throw new ApiError(response.status, error.code, error.message);
  }
  // Played through Web Audio, not an <audio> element: a blob: media URL would need the
  // Content-Security-Policy widened (media-src), and this needs nothing of it.
  const context = new AudioContext();
  const buffer = await context.decodeAudioData(await response.arrayBuffer());
  const source = context.createBufferSource();
  source.buffer = buffer;
  source.connect(context.destination);
  let ended = false;
  const done = () => { if (ended) return; ended = true; context.close().catch(() => {}); finish(button); };
  source.addEventListener("ended", done);
  source.start();
  return () => { try { source.stop(); } catch { /* already stopped */ } done(); };
}

export async function readAloud(li, button) {
  const wasMine = playing?.button === button;
  if (playing) { playing.stop(); finish(playing.button); }
  if (wasMine) return; // a second press stops
  button.setAttribute("aria-pressed", "true");
  button.setAttribute("aria-label", _("Stop reading"));
  const entry = { button, stop: () => {} };
  playing = entry;
  try {
    const lines = wordsOf(li.querySelector(".content"));
    if (!lines.length) throw new Error(_("There are no words to read in this message."));
    entry.stop = document.getElementById("messages")?.dataset.serverReadsAloud === "1"
      ? await speakOnServer(li.dataset.id, button)
      : speakInBrowser(lines, button);
  } catch (error) {
    finish(button);
    throw error;
  }
}
