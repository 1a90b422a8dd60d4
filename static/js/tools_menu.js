// The composer's tools menu: switch tools on or off for this conversation (PATCH `tools`),
// and say in the hint line which are on.
import { api } from "./api.js";
import { toast } from "./dom.js";
import { _, format } from "./i18n.js";

const menu = document.getElementById("tools-menu");
const root = document.getElementById("conversation");

function showOn(boxes) {
  const names = boxes.filter((box) => box.checked).map((box) => box.dataset.name);
  const hint = document.getElementById("tools-on");
  document.getElementById("tools-on-names").textContent = names.join(", ");
  hint.hidden = names.length === 0;
  menu.querySelector("summary .dot")?.remove();
  if (names.length) {
    const dot = document.createElement("span");
    dot.className = "dot";
    dot.setAttribute("aria-hidden", "true");
    menu.querySelector("summary").append(dot);
  }
}

if (menu && root) {
  const boxes = [...menu.querySelectorAll("input[type=checkbox]")];
  for (const box of boxes) {
    box.addEventListener("change", async () => {
      const tools = boxes.filter((b) => b.checked).map((b) => b.value);
      box.disabled = true;
      try {
        await api("PATCH", `/conversations/${root.dataset.id}`, { tools });
        showOn(boxes);
      } catch (error) {
        box.checked = !box.checked;
        toast(format(_("Could not change the tools: %(problem)s"), { problem: error.message }), { error: true });
      } finally {
        box.disabled = false;
      }
    });
  }
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && menu.open) {
      menu.open = false;
      menu.querySelector("summary").focus();
    }
  });
}
