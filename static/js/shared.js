// A shared conversation: draw the math and diagrams of its replies.
import { renderRich } from "./rich.js";

renderRich(document.querySelector(".shared-messages") ?? document);
