// The list page: filters, infinite scroll, bulk actions, projects, live updates.
import { ApiError, api, download, upload } from "./api.js";
import { clearToast, confirmDialog, el, parseFragment, reloadWithToast, toast } from "./dom.js";
import { _, format, ngettext } from "./i18n.js";
import { onListEvent } from "./live.js";

const page = document.getElementById("list-page");
const rows = document.getElementById("conversation-rows");
const filters = document.getElementById("filters");
const sentinel = document.getElementById("rows-sentinel");
const loadMoreButton = document.getElementById("load-more");
const selectAll = document.getElementById("select-all");
const selectedCount = document.getElementById("selected-count");
const bulkButtons = [...document.querySelectorAll("[data-bulk]")];
const bulkProject = document.getElementById("bulk-project");

// --- filters ------------------------------------------------------------------------------
// A picked filter applies at once; dates apply on Enter or Apply (half-typed dates don't).
for (const field of filters.querySelectorAll("select")) {
  field.addEventListener("change", () => filters.requestSubmit());
}
// Empty fields stay out of the address.
filters.addEventListener("formdata", (event) => {
  for (const [key, value] of [...event.formData.entries()]) if (!value) event.formData.delete(key);
});

function rowsUrl(cursor) {
  const params = new URLSearchParams(location.search);
  params.delete("cursor");
  params.set("fragment", "rows");
  if (cursor) params.set("cursor", cursor);
  return `${page.dataset.rowsUrl}?${params}`;
}

// --- infinite scroll -------------------------------------------------------------------------
let loading = false;
async function loadMore() {
  const cursor = rows.dataset.nextCursor;
  if (loading || !cursor) return;
  loading = true;
  loadMoreButton.disabled = true;
  try {
    const response = await fetch(rowsUrl(cursor), { credentials: "same-origin" });
    if (!response.ok) throw new Error(String(response.status));
    const fragment = parseFragment(await response.text());
    for (const li of fragment.querySelectorAll("li.row-item")) {
      if (!rows.querySelector(`li[data-id="${CSS.escape(li.dataset.id)}"]`)) rows.append(li);
    }
    rows.dataset.nextCursor = response.headers.get("X-Next-Cursor") || "";
    sentinel.hidden = !rows.dataset.nextCursor;
  } catch {
    toast(_("Could not load more conversations."), { error: true });
  } finally {
    loading = false;
    loadMoreButton.disabled = false;
  }
}
loadMoreButton.addEventListener("click", loadMore);
if ("IntersectionObserver" in window) {
  new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) loadMore();
  }, { rootMargin: "300px" }).observe(sentinel);
}

// --- selection and bulk actions ----------------------------------------------------------------
function selectedIds() {
  return [...rows.querySelectorAll(".row-select:checked")].map((box) => box.value);
}

function updateSelection() {
  const ids = selectedIds();
  const boxes = rows.querySelectorAll(".row-select");
  selectedCount.textContent = ids.length
    ? format(ngettext("%(n)s selected", "%(n)s selected", ids.length), { n: ids.length }) : "";
  for (const button of bulkButtons) button.disabled = ids.length === 0;
  bulkProject.disabled = ids.length === 0;
  document.getElementById("bulk-actions").hidden = ids.length === 0;
  selectAll.checked = ids.length > 0 && ids.length === boxes.length;
  selectAll.indeterminate = ids.length > 0 && ids.length < boxes.length;
}
rows.addEventListener("change", (event) => {
  if (event.target.matches(".row-select")) updateSelection();
});
selectAll.addEventListener("change", () => {
  for (const box of rows.querySelectorAll(".row-select")) box.checked = selectAll.checked;
  updateSelection();
});

const BULK = {
  async archive(ids) {
    const result = await api("POST", "/conversations/bulk", { action: "archive", ids });
    toast(format(ngettext("%(n)s conversation archived.", "%(n)s conversations archived.", result.count), { n: result.count }));
    await refreshRows();
  },
  async delete(ids) {
    const question = format(ngettext(
      "Delete %(n)s conversation and all its messages? This cannot be undone.",
      "Delete %(n)s conversations and all their messages? This cannot be undone.", ids.length), { n: ids.length });
    if (!(await confirmDialog(question, _("Delete")))) return;
    const result = await api("POST", "/conversations/bulk", { action: "delete", ids });
    toast(format(ngettext("%(n)s conversation deleted.", "%(n)s conversations deleted.", result.count), { n: result.count }));
    await refreshRows();
  },
  async export(ids) {
    await download("POST", "/conversations/bulk", { action: "export", ids, format: "json", include_metadata: true }, "conversations.zip");
  },
};

for (const button of bulkButtons) {
  button.addEventListener("click", async () => {
    const ids = selectedIds();
    if (!ids.length) return;
    button.disabled = true;
    try {
      await BULK[button.dataset.bulk](ids);
    } catch (error) {
      toast(error.message || _("Something went wrong."), { error: true });
    } finally {
      updateSelection();
    }
  });
}

bulkProject.addEventListener("change", async () => {
  const value = bulkProject.value;
  if (!value) return;
  const ids = selectedIds();
  try {
    for (const id of ids) {
      await api("PATCH", `/conversations/${id}`, { project_id: value === "none" ? null : Number(value) });
    }
    toast(format(ngettext("%(n)s conversation moved.", "%(n)s conversations moved.", ids.length), { n: ids.length }));
    await refreshRows();
  } catch (error) {
    toast(error.message || _("Something went wrong."), { error: true });
  } finally {
    bulkProject.value = "";
    updateSelection();
  }
});

// --- live updates: re-read the first page with the current filters ---------------------------------
async function refreshRows() {
  const response = await fetch(rowsUrl(""), { credentials: "same-origin" });
  if (!response.ok) return;
  const fragment = parseFragment(await response.text());
  const keep = new Set(selectedIds());
  rows.replaceChildren(fragment);
  for (const box of rows.querySelectorAll(".row-select")) box.checked = keep.has(box.value);
  rows.dataset.nextCursor = response.headers.get("X-Next-Cursor") || "";
  sentinel.hidden = !rows.dataset.nextCursor;
  updateSelection();
}

let refreshTimer = null;
onListEvent(() => {
  if (document.querySelector("dialog[open]")) return;
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(refreshRows, 300);
});

// --- projects --------------------------------------------------------------------------------
const projectError = document.getElementById("project-error");
function projectFailed(error) {
  projectError.textContent = error.status === 404 || error.status === 405
    ? _("Projects cannot be changed here yet.") : (error.message || _("Something went wrong."));
  projectError.hidden = false;
}

document.getElementById("project-create").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  projectError.hidden = true;
  try {
    await api("POST", "/projects", { name: form.elements.name.value.trim() });
    location.reload();
  } catch (error) {
    projectFailed(error);
  }
});

document.getElementById("project-list").addEventListener("click", async (event) => {
  const button = event.target.closest("[data-rename-project]");
  if (!button) return;
  const item = button.closest("li");
  const name = window.prompt(_("New name for the project"), item.querySelector(".project-name").textContent);
  if (!name || !name.trim()) return;
  projectError.hidden = true;
  try {
    await api("PATCH", `/projects/${button.dataset.renameProject}`, { name: name.trim() });
    location.reload();
  } catch (error) {
    projectFailed(error);
  }
});

updateSelection();

// Import: this app's export opens the new conversation; another app's file lists what came.
// A refusal is said in people's words: the API's message names the field at fault, for
// developers, in English.
const IMPORT_REFUSALS = {
  invalid_import: () => _("This file cannot be imported: it is not an export this site can read, or part of it is damaged."),
  too_long: () => _("This file is too large to import."),
  rate_limited: () => _("Too many requests at once; wait a moment and try again."),
  conflict: () => _("An import of yours is still running; try again when it ends."),
  interrupted: () => _("The import was interrupted. Try again."),
};
// What a file held that could not be imported, by title (the API's reasons are for
// developers); closes on OK.
function reportSkipped(imported, skipped) {
  const dialog = document.getElementById("import-report");
  dialog.querySelector("h2").textContent = imported;
  const list = dialog.querySelector(".import-skipped");
  list.replaceChildren(...skipped.map((entry) => el("li", {
    text: entry.title || format(_("Untitled conversation (number %(n)s in the file)"), { n: entry.index + 1 }),
  })));
  clearToast();
  dialog.showModal();
  return new Promise((resolve) => dialog.addEventListener("close", resolve, { once: true }));
}

// A large file is imported by a worker (202: the job): ask how it goes until it has ended;
// answer it ready, or throw its refusal as the request would have.
async function importEnded(job) {
  let wait = 500;
  while (job.status === "pending" || job.status === "running") {
    await new Promise((resolve) => setTimeout(resolve, wait));
    wait = Math.min(wait * 2, 3000);
    try {
      job = await api("GET", `/imports/${job.id}`);
    } catch (error) {
      // The server away for a moment (a restart, status 0: no answer): the job goes on; ask again.
      if (error instanceof ApiError && error.status > 0 && error.status < 500) throw error;
    }
  }
  if (job.status === "failed") throw new ApiError(422, job.error_code, job.error);
  return job;
}

const importFile = document.getElementById("import-file");
const importProgress = document.getElementById("import-progress");
if (importFile) {
  importFile.addEventListener("change", async () => {
    const file = importFile.files[0];
    if (!file) return;
    toast(format(_("Importing %(name)s…"), { name: file.name }));
    try {
      let answer = await upload("/conversations/import", file);
      if ("imported_count" in answer) { // the job of a large file (202)
        importFile.disabled = true;
        importProgress.textContent = format(_("Importing %(name)s… A large file takes a while; you may leave this page."), { name: file.name });
        importProgress.hidden = false;
        answer = await importEnded(answer);
        importProgress.hidden = true;
      }
      const items = answer.items || [answer];
      const skipped = answer.skipped || [];
      if (items.length === 1 && !skipped.length) { window.location.href = `/conversations/${items[0].id}/`; return; }
      const imported = format(ngettext("Imported %(n)s conversation.", "Imported %(n)s conversations.", items.length), { n: items.length });
      if (skipped.length) {
        await reportSkipped(imported, skipped);
        window.location.reload();
        return;
      }
      reloadWithToast(imported);
    } catch (error) {
      toast((IMPORT_REFUSALS[error.code] || (() => _("The import failed.")))(), { error: true });
    } finally {
      importFile.value = "";
      importFile.disabled = false;
      importProgress.hidden = true;
    }
  });
}
