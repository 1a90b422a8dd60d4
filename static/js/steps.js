// A reply's steps in the reader's language: stepText(frameOrPart), stepDetails(frameOrPart).
// Takes a `thinking` frame or a stored part ({type: thinking|tool_call|tool_result, ...});
// the words come from step_catalog.js (generated from agent/steps.py), translated by
// Django's JavaScript catalog. The same rules as conversations/steps.py on the server.
import { _, format } from "./i18n.js";
import { OTHER_TOOL, STEPS, TOOLS } from "./step_catalog.js";

const DETAIL_CHARS = 2000;

function toolCode(name, outcome) {
  return `tool.${TOOLS.includes(name) ? name : OTHER_TOOL}.${outcome}`;
}

// The step's code: its own, or for a tool part stored without one, its tool's.
export function stepCode(step) {
  if (!step || typeof step !== "object") return null;
  if (typeof step.code === "string" && Object.hasOwn(STEPS, step.code)) return step.code;
  if (step.code == null && (step.type === "tool_call" || step.type === "tool_result")) {
    const name = String(step.name || "");
    if (step.type === "tool_call") return toolCode(name, "call");
    return toolCode(name, step.is_error ? "failed" : "done");
  }
  return null;
}

function paramsOf(step) {
  return step.params && typeof step.params === "object" ? step.params : { tool: String(step.name || "") };
}

// The step as a sentence in the page's language (older steps without a code: their words).
export function stepText(step) {
  const code = stepCode(step);
  if (code === null) return step && typeof step.content === "string" ? step.content : "";
  const params = paramsOf(step);
  return format(STEPS[code](params), params);
}

// What a tool step may show under its sentence: [{label, value}] (a call's input, a
// result's output); nothing for a failure, whose error text was for the model.
export function stepDetails(step) {
  const code = stepCode(step);
  if (code === null) return [];
  const params = paramsOf(step);
  if (code.startsWith("tool.") && code.endsWith(".call")) {
    const args = step.args ?? params.args;
    if (!args || (typeof args === "object" && !Object.keys(args).length)) return [];
    const value = typeof args === "string" ? args : JSON.stringify(args);  // an imported call's text as it was
    return [{ label: _("Input"), value: value.slice(0, DETAIL_CHARS) }];
  }
  if (!(code.startsWith("tool.") && code.endsWith(".done"))) return [];
  const output = step.code == null ? step.content : step.output || params.result;
  if (typeof output !== "string" || !output) return [];
  return [{ label: _("Result"), value: output.slice(0, DETAIL_CHARS) }];
}
