// Settings → Your data: start an export of every conversation, follow it until the zip is
// ready, then offer it (SPEC: POST /api/v1/exports, GET /api/v1/exports/{id}).
import { api } from "./api.js";
import { el } from "./dom.js";
import { _, format } from "./i18n.js";

const button = document.getElementById("export-all");
const status = document.getElementById("export-status");

async function follow(id) {
  for (;;) {
    const job = await api("GET", `/exports/${id}`);
    if (job.status === "ready") {
      const label = format(_("Download (%(n)s conversations)"), { n: job.conversation_count });
      status.replaceChildren(_("Your export is ready."), " ", el("a", { href: job.download_url, download: "", text: label }));
      return;
    }
    if (job.status === "failed") { status.textContent = job.error || _("The export failed."); return; }
    status.textContent = _("Writing your export…");
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

button?.addEventListener("click", async () => {
  button.disabled = true;
  status.textContent = _("Writing your export…");
  try {
    const job = await api("POST", "/exports", { format: "markdown-zip" });
    await follow(job.id);
  } catch (error) {
    status.textContent = error.message || _("The export failed.");
  } finally {
    button.disabled = false;
  }
});
