// A form marked data-confirm asks before it is sent (the page's confirm dialog).
import { confirmDialog } from "./dom.js";

for (const form of document.querySelectorAll("form[data-confirm]")) {
  form.addEventListener("submit", async (event) => {
    if (form.dataset.confirmed) return;
    event.preventDefault();
    if (await confirmDialog(form.dataset.confirm)) {
      form.dataset.confirmed = "1";
      form.requestSubmit();
    }
  });
}
