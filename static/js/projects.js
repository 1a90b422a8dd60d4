// Projects in the shell: the list the sidebar was drawn with (#projects-data), and the one
// dialog that picks a project for a conversation or makes a new one (the sidebar row's ⋯,
// its "New project", the conversation header's "Move to project…").
import { api } from "./api.js";
import { _ } from "./i18n.js";

const known = JSON.parse(document.getElementById("projects-data")?.textContent || "[]");
const listeners = new Set();

export function onProjectCreated(listener) { listeners.add(listener); }

function dialogParts() {
  const dialog = document.getElementById("project-dialog");
  return dialog && {
    dialog,
    title: document.getElementById("project-dialog-title"),
    choice: document.getElementById("project-choice"),
    select: document.getElementById("project-select"),
    fresh: document.getElementById("project-new"),
    name: document.getElementById("project-name"),
    error: document.getElementById("project-error"),
    save: document.getElementById("project-save"),
  };
}

function fillSelect(select, current) {
  for (const option of [...select.options]) if (option.value !== "" && option.value !== "new") option.remove();
  const newOption = select.querySelector('option[value="new"]');
  for (const p of known) select.insertBefore(new Option(p.name, String(p.id)), newOption);
  select.value = current == null ? "" : String(current);
}

async function create(name) {
  const project = await api("POST", "/projects", { name });
  known.push({ id: project.id, name: project.name });
  known.sort((a, b) => a.name.localeCompare(b.name));
  for (const listener of listeners) listener(project);
  return project;
}

// Ask which project; resolve its id (null: none), or undefined when the person cancelled.
// `creating`: only the name of a new project is asked (the sidebar's "New project").
function ask({ current = null, creating = false } = {}) {
  const parts = dialogParts();
  if (!parts) return Promise.resolve(undefined);
  const { dialog, title, choice, select, fresh, name, error, save } = parts;
  title.textContent = creating ? title.dataset.newTitle : title.dataset.moveTitle;
  save.textContent = creating ? _("Create") : _("Move");
  choice.hidden = creating;
  fillSelect(select, current);
  name.value = "";
  error.hidden = true;
  const showName = () => {
    fresh.hidden = !creating && select.value !== "new";
    name.required = !fresh.hidden;
  };
  select.onchange = () => { showName(); if (!fresh.hidden) name.focus(); };
  showName();
  dialog.returnValue = "";
  dialog.showModal();
  (creating ? name : select).focus();
  return new Promise((resolve) => {
    const form = document.getElementById("project-form");
    form.onsubmit = async (event) => {
      const submitter = event.submitter;
      if (submitter?.value !== "ok") return; // Cancel closes the dialog as it is
      event.preventDefault();
      try {
        const value = !fresh.hidden ? (await create(name.value.trim())).id
          : select.value ? Number(select.value) : null;
        dialog.close("ok");
        resolve(value);
      } catch (failure) {
        error.textContent = failure.message || _("Something went wrong.");
        error.hidden = false;
      }
    };
    dialog.addEventListener("close", () => { if (dialog.returnValue !== "ok") resolve(undefined); }, { once: true });
  });
}

export function chooseProject(current) { return ask({ current }); }
export function newProject() { return ask({ creating: true }); }
