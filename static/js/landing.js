// A new chat: nothing is stored until the first message, which creates the conversation
// (POST /conversations with initial_message) and opens it while the reply streams.
import { api } from "./api.js";
import { initComposer, newClientId } from "./composer.js";
import { toast } from "./dom.js";
import { _ } from "./i18n.js";

const errorBanner = document.getElementById("error-banner");
const temporary = document.getElementById("temporary-toggle");
const temporaryInput = document.getElementById("temporary-input");
const model = document.getElementById("new-model");
const preset = document.getElementById("preset-input");
let busy = false;

function showError(text) {
  errorBanner.textContent = text;
  errorBanner.hidden = !text;
}

temporary?.addEventListener("click", () => {
  const on = temporary.getAttribute("aria-pressed") !== "true";
  temporary.setAttribute("aria-pressed", String(on));
  temporaryInput.value = on ? "1" : "";
  document.getElementById("landing-temporary").hidden = !on;
  document.getElementById("landing-title").hidden = on;
  composer.input.focus();
});

async function start(content, { confirm = false } = {}) {
  if (busy) return;
  busy = true;
  showError("");
  composer.hideSensitive();
  const body = {};
  if (model?.value) body.model = model.value;
  if (temporaryInput.value) body.temporary = true;
  if (preset?.value) body.preset_id = preset.value;
  const message = { content, client_id: newClientId() };
  if (confirm) message.confirm_sensitive = true;
  try {
    if (composer.hasFiles()) {
      // Files belong to a conversation: make it, upload them, and let the conversation page
      // send the message (kept in its queue, so a failed page load loses nothing).
      const conversation = await api("POST", "/conversations", body);
      await composer.uploadAll(`/conversations/${conversation.id}/attachments`);
      const frame = { type: "message.send", ...message, attachments: composer.attachmentIds() };
      sessionStorage.setItem(`chat.queue.${conversation.id}`, JSON.stringify([frame]));
      location.assign(`/conversations/${conversation.id}/`);
      return;
    }
    const conversation = await api("POST", "/conversations", { ...body, initial_message: message });
    location.assign(`/conversations/${conversation.id}/`);
  } catch (error) {
    busy = false;
    if (error.code === "sensitive") {
      composer.showSensitive(error.detail, content);
      return;
    }
    if (error.code === "budget_exceeded") showError(error.message);
    else if (error.status === 429) showError(_("You are sending messages too fast; wait a moment."));
    else showError(error.message || _("Something went wrong."));
    if (!composer.input.value) composer.setText(content);
    toast(_("Your message was not sent."), { error: true });
  }
}

const composer = initComposer({
  uploadPath: () => null, // kept until the conversation exists
  onSubmit: (content) => start(content),
  onResend: (content, { confirm }) => start(content, { confirm }),
});
composer.input.focus();

// A preset's starter prompts: one click sends it as the first message. (They also submit
// a plain form, which starts the chat when clicked before this module has run.)
for (const button of document.querySelectorAll("[data-starter]")) {
  button.addEventListener("click", (event) => {
    event.preventDefault();
    start(button.dataset.starter);
  });
}
