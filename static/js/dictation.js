// Dictation: the microphone button records (MediaRecorder), stops on a second press or at
// the longest recording allowed, sends the audio to POST /api/v1/audio/transcriptions and
// puts the words into the message box to edit before sending.
import { upload } from "./api.js";
import { toast } from "./dom.js";
import { _, format } from "./i18n.js";

const TYPES = ["audio/webm;codecs=opus", "audio/ogg;codecs=opus", "audio/mp4", "audio/webm"];

export function initDictation({ input, setText }) {
  const button = document.getElementById("mic-button");
  if (!button) return;
  const time = button.querySelector(".mic-time");
  const maxSeconds = Number(button.dataset.maxSeconds) || 120;
  let recorder = null;
  let timer = null;

  function show(state, seconds = 0) {
    button.dataset.state = state;
    button.setAttribute("aria-pressed", String(state === "recording"));
    button.disabled = state === "transcribing";
    const label = { recording: _("Stop dictating"), transcribing: _("Transcribing…") }[state] || _("Dictate");
    button.setAttribute("aria-label", label);
    time.textContent = state === "recording" ? `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}` : "";
  }

  async function transcribe(blob) {
    show("transcribing");
    const type = (blob.type || "audio/webm").split(";")[0];
    const file = new File([blob], `dictation.${type.split("/")[1] || "webm"}`, { type });
    try {
      const { text } = await upload("/audio/transcriptions", file);
      if (text) {
        const before = input.value.trimEnd();
        setText(before ? `${before} ${text}` : text);
        input.focus();
      } else {
        toast(_("No words were heard."), { error: true });
      }
    } catch (error) {
      toast(error.message || _("Could not transcribe the recording."), { error: true });
    } finally {
      show("idle");
    }
  }

  async function start() {
    if (!navigator.mediaDevices?.getUserMedia || !window.MediaRecorder) {
      toast(_("This browser cannot record audio."), { error: true });
      return;
    }
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    } catch (error) {
      const denied = error.name === "NotAllowedError" || error.name === "SecurityError";
      toast(denied ? _("Allow the microphone for this site to dictate.") : _("No microphone was found."), { error: true });
      return;
    }
    const mimeType = TYPES.find((t) => MediaRecorder.isTypeSupported(t));
    recorder = new MediaRecorder(stream, mimeType ? { mimeType } : {});
    const chunks = [];
    const began = Date.now();
    recorder.addEventListener("dataavailable", (event) => { if (event.data.size) chunks.push(event.data); });
    recorder.addEventListener("stop", () => {
      clearInterval(timer);
      for (const track of stream.getTracks()) track.stop();
      const blob = new Blob(chunks, { type: recorder.mimeType || mimeType || "audio/webm" });
      recorder = null;
      if (blob.size) transcribe(blob);
      else show("idle");
    });
    recorder.start(1000);
    show("recording");
    timer = setInterval(() => {
      const seconds = Math.floor((Date.now() - began) / 1000);
      if (seconds >= maxSeconds) {
        toast(format(_("Recording stopped at %(n)s seconds, the longest allowed."), { n: maxSeconds }));
        recorder?.stop();
      } else show("recording", seconds);
    }, 250);
  }

  button.addEventListener("click", () => {
    if (recorder) recorder.stop();
    else start();
  });
}
