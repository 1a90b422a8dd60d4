// The Prompts page's import: a prompts file (from Export, or the prompts.json of a data
// export) is read here and sent to POST /api/v1/prompts/import; the page then shows them.
import { api } from "./api.js";
import { reloadWithToast, toast } from "./dom.js";
import { _, format, ngettext } from "./i18n.js";

const input = document.getElementById("import-prompts");
input?.addEventListener("change", async () => {
  const file = input.files[0];
  input.value = "";
  if (!file) return;
  let data;
  try {
    data = JSON.parse(await file.text());
  } catch {
    toast(_("That file is not a prompts file."), { error: true });
    return;
  }
  try {
    const result = await api("POST", "/prompts/import", data);
    const added = format(ngettext("Added %(n)s prompt.", "Added %(n)s prompts.", result.created.length), { n: result.created.length });
    const skipped = result.skipped.length
      ? " " + format(ngettext("%(n)s skipped: you already have that command.", "%(n)s skipped: you already have those commands.", result.skipped.length), { n: result.skipped.length })
      : "";
    reloadWithToast(added + skipped);
  } catch (error) {
    // A file of another kind (a conversation export…): say so, not which of its fields the API disliked.
    const notPrompts = error.code === "invalid" && data?.format !== "chat-prompts";
    toast(notPrompts ? _("That file is not a prompts file.") : error.message, { error: true });
  }
});
