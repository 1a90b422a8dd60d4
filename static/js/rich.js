// TeX math (KaTeX) and ```mermaid diagrams (Mermaid) in server-rendered Markdown.
//
// The server marks math as <span class="math inline|display"> / <div class="math display">
// holding the TeX as text, and leaves a mermaid block as <pre><code class="language-mermaid">
// with its source (conversations/rendering.py). Both libraries are vendored under
// static/vendor/ and loaded the first time a page holds something for them.
//
// The Content-Security-Policy allows no inline style: KaTeX is rendered into the DOM
// (its styles go through CSSOM, which the policy allows); Mermaid's SVG carries a <style>
// element, so it is drawn under the guard below and shown as an <img> with a data: URL (an
// image keeps its own styles and runs no script). Mermaid and the guard live in a frame of
// their own (same origin, out of sight): its globals and the guard's patched DOM functions
// are the frame's, so no other code of the page ever sees them.

const VENDOR = new URL("../vendor/", import.meta.url);
const MATH = "span.math, div.math";
const DIAGRAM = "pre > code.language-mermaid";
// Errors thrown, not drawn in red (the source is shown instead); no \href, \url or
// \includegraphics; no rule or space larger than 100em, no macro expanding without end.
const KATEX_OPTIONS = {
  throwOnError: true,
  strict: "ignore",
  trust: false,
  maxSize: 100,
  maxExpand: 1000,
};
// A longer formula shows as source: an 8,000-term one kept the tab busy for ~10 s.
const MAX_TEX_CHARS = 4000;
const SLICE_MS = 40; // typesetting yields to the page this often (many formulas in a reply)
const loaded = new Map();
let diagrams = Promise.resolve(); // Mermaid keeps global state: one drawing at a time
let diagramCount = 0;
const LOAD_MS = 30000; // for Mermaid's script in its frame

/** Render the math and diagrams inside `scope` not rendered yet; never rejects. */
export function renderRich(scope = document) {
  const math = claim(scope, MATH);
  const code = claim(scope, DIAGRAM);
  if (math.length || code.length) loadStylesheet("../css/rich.css");
  const work = [];
  if (math.length) work.push(renderMath(math));
  if (code.length) work.push(renderDiagrams(code));
  return Promise.all(work).then(() => undefined);
}

// Mark what we take at once, so a second call (even before this one ends) skips it.
function claim(scope, selector) {
  const found = [...scope.querySelectorAll(selector)];
  if (scope instanceof Element && scope.matches(selector)) found.unshift(scope);
  const fresh = found.filter((el) => !el.dataset.rich);
  for (const el of fresh) el.dataset.rich = "pending";
  return fresh;
}

function loadOnce(key, make) {
  if (!loaded.has(key)) loaded.set(key, make());
  return loaded.get(key);
}

function loadScript(path, globalName) {
  return loadOnce(path, () => {
    if (window[globalName]) return Promise.resolve(window[globalName]);
    return new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = new URL(path, VENDOR).href;
      script.async = true;
      script.onload = () => resolve(window[globalName]);
      script.onerror = () => reject(new Error(`could not load ${path}`));
      document.head.append(script);
    });
  });
}

function loadStylesheet(path) {
  const href = new URL(path, import.meta.url).href;
  return loadOnce(href, () => {
    const links = document.querySelectorAll('link[rel~="stylesheet"]');
    if (![...links].some((link) => link.href === href)) {
      const link = document.createElement("link");
      link.rel = "stylesheet";
      link.href = href;
      document.head.append(link);
    }
    return Promise.resolve();
  });
}

function showSource(el, source) {
  const code = document.createElement("code");
  code.className = "math-source";
  code.textContent = source;
  el.replaceChildren(code);
  el.dataset.rich = "error";
}

// --- math ---------------------------------------------------------------------

async function renderMath(elements) {
  loadStylesheet("../vendor/katex/katex.min.css");
  let katex;
  try {
    katex = await loadScript("katex/katex.min.js", "katex");
  } catch {
    for (const el of elements) el.dataset.rich = "error"; // the TeX stays as text
    return;
  }
  let slice = performance.now();
  for (const el of elements) {
    const tex = el.textContent;
    const displayMode = el.classList.contains("display");
    try {
      if (tex.length > MAX_TEX_CHARS) throw new Error("too long to typeset");
      katex.render(tex, el, { ...KATEX_OPTIONS, displayMode });
      el.dataset.rich = "done";
    } catch {
      showSource(el, displayMode ? `$$${tex}$$` : `$${tex}$`);
    }
    if (performance.now() - slice > SLICE_MS) {
      await new Promise((resolve) => setTimeout(resolve)); // let the page answer meanwhile
      slice = performance.now();
    }
  }
}

// --- diagrams -----------------------------------------------------------------

function renderDiagrams(codes) {
  const run = diagrams.then(async () => {
    let win;
    try {
      win = await loadMermaid();
    } catch {
      for (const code of codes) code.dataset.rich = "error"; // the source stays
      return;
    }
    for (const code of codes) await renderDiagram(win, code);
  });
  diagrams = run;
  return run;
}

// The frame Mermaid draws in: laid out (Mermaid measures text) but out of sight. Its
// about:blank document has this page's origin and Content-Security-Policy.
function diagramFrame() {
  return loadOnce("diagram-frame", () => new Promise((resolve, reject) => {
    const frame = document.createElement("iframe");
    frame.setAttribute("aria-hidden", "true");
    frame.tabIndex = -1;
    frame.className = "diagram-frame";
    // CSSOM, which the policy allows.
    Object.assign(frame.style, {
      position: "absolute", left: "-10000px", top: "0", width: "1200px", height: "900px", border: "0",
    });
    document.body.append(frame);
    const win = frame.contentWindow;
    const script = win.document.createElement("script");
    script.src = new URL("mermaid/mermaid.min.js", VENDOR).href;
    // A frame whose first document an engine replaced meanwhile never loads it: give up
    // (the sources stay as code) rather than hold every later diagram.
    const late = setTimeout(() => reject(new Error("Mermaid did not load")), LOAD_MS);
    script.onload = () => {
      clearTimeout(late);
      if (win.mermaid) resolve(win);
      else reject(new Error("no Mermaid"));
    };
    script.onerror = () => {
      clearTimeout(late);
      reject(new Error("could not load Mermaid"));
    };
    win.document.head.append(script);
  }));
}

async function loadMermaid() {
  const win = await diagramFrame();
  const chosen = document.documentElement.dataset.theme; // Settings' theme, else the device's
  const dark = chosen ? chosen === "dark" : window.matchMedia("(prefers-color-scheme: dark)").matches;
  win.mermaid.initialize({
    startOnLoad: false,
    securityLevel: "strict",
    theme: dark ? "dark" : "default",
    htmlLabels: false, // labels as SVG text: an <img> shows no foreignObject HTML
    flowchart: { htmlLabels: false },
    suppressErrorRendering: true,
    logLevel: "fatal",
  });
  return win;
}

async function renderDiagram(win, code) {
  const source = code.textContent;
  const pre = code.parentElement;
  let host = null;
  try {
    host = win.document.createElement("div");
    host.style.width = "1200px";
    win.document.body.append(host);
    diagramCount += 1;
    const svg = await drawInFrame(win, `rich-mermaid-${diagramCount}`, source, host);
    const img = diagramImage(win, svg, source);
    const figure = document.createElement("div");
    figure.className = "mermaid-diagram";
    figure.append(img);
    // The source stays, hidden: whatever the page built around the block (a copy button)
    // keeps working.
    pre.hidden = true;
    pre.after(figure);
    code.dataset.rich = "done";
  } catch {
    code.dataset.rich = "error"; // the source stays, as code
  } finally {
    host?.remove();
  }
}

const INERT = "urn:x-rich:inert";
const SVG = "http://www.w3.org/2000/svg";
const STYLE_NAMESPACES = new Set(["http://www.w3.org/1999/xhtml", SVG]);
const PARKED = "data-rich-style";
const TAG = /<[A-Za-z][^<>]*>/g;
const STYLE_ATTRIBUTE = /(\s)style(\s*=)/gi;
const HANDLER_ATTRIBUTE = /\son[a-z]+\s*=\s*("[^"]*"|'[^']*'|[^\s"'=<>`]+)/gi;

// Draw `source` in `host` (in the frame `win`) and return the <svg> element Mermaid built
// (a detached copy).
async function drawInFrame(win, id, source, host) {
  let drawn = null;
  const restore = guardInlineStyles(win, host, (svg) => {
    drawn = svg.cloneNode(true);
  });
  try {
    await win.mermaid.render(id, source, host);
  } finally {
    restore();
  }
  if (!drawn) throw new Error("Mermaid drew nothing");
  return drawn;
}

// While Mermaid draws, what the policy would refuse goes where it allows:
// - a style="" attribute, set or parsed from markup, becomes the same declarations
//   through CSSOM (see parkStyles);
// - a <style> element becomes an inert element of that name whose rules reach the page
//   through a constructed stylesheet until the drawing ends (Mermaid measures its text);
// - Mermaid serializes its drawing and parses that text again to sanitize it: we take the
//   drawing itself (`onSerialize`; it is shown as an image, which runs no script) and let
//   Mermaid sanitize an empty string.
// All of it is the frame's own (`win`): the page's DOM functions are never touched.
// Returns the function that puts everything back.
function guardInlineStyles(win, host, onSerialize) {
  const { Document, Element, DOMParser, CSSStyleSheet } = win;
  const document = win.document;
  const sheets = [];
  const saved = {
    createElement: Document.prototype.createElement,
    createElementNS: Document.prototype.createElementNS,
    setAttribute: Element.prototype.setAttribute,
    setAttributeNS: Element.prototype.setAttributeNS,
    parseFromString: DOMParser.prototype.parseFromString,
  };
  const innerHTML = Object.getOwnPropertyDescriptor(Element.prototype, "innerHTML");
  const inert = (doc) => {
    const sheet = new CSSStyleSheet();
    sheets.push(sheet);
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
    return inertStyle(win, doc, sheet);
  };
  const isStyle = (el, ns, name) => !ns && "style" in el && String(name).toLowerCase() === "style";
  Document.prototype.createElement = function (name, options) {
    if (this === document && String(name).toLowerCase() === "style") return inert(this);
    return saved.createElement.call(this, name, options);
  };
  Document.prototype.createElementNS = function (ns, name, options) {
    if (this === document && STYLE_NAMESPACES.has(ns) && name === "style") return inert(this);
    return saved.createElementNS.call(this, ns, name, options);
  };
  Element.prototype.setAttribute = function (name, value) {
    if (!isStyle(this, null, name)) return saved.setAttribute.call(this, name, value);
    this.style.cssText = String(value);
  };
  Element.prototype.setAttributeNS = function (ns, name, value) {
    if (!isStyle(this, ns, name)) return saved.setAttributeNS.call(this, ns, name, value);
    this.style.cssText = String(value);
  };
  DOMParser.prototype.parseFromString = function (markup, type) {
    return unparkStyles(saved.parseFromString.call(this, parkStyles(markup), type));
  };
  Object.defineProperty(Element.prototype, "innerHTML", {
    ...innerHTML,
    get() {
      const svg = this.parentNode === host ? this.querySelector(":scope > svg") : null;
      if (!svg) return innerHTML.get.call(this);
      onSerialize(svg);
      return "";
    },
    set(markup) {
      if (!host.contains(this)) return innerHTML.set.call(this, markup);
      innerHTML.set.call(this, parkStyles(markup));
      unparkStyles(this);
    },
  });
  return () => {
    Object.assign(Document.prototype, {
      createElement: saved.createElement,
      createElementNS: saved.createElementNS,
    });
    Object.assign(Element.prototype, {
      setAttribute: saved.setAttribute,
      setAttributeNS: saved.setAttributeNS,
    });
    DOMParser.prototype.parseFromString = saved.parseFromString;
    Object.defineProperty(Element.prototype, "innerHTML", innerHTML);
    document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => !sheets.includes(s));
  };
}

// Markup to parse keeps its style attributes under another name (the parser would refuse
// them, with an error in the console), and they come back through CSSOM once the elements
// exist. Event handler attributes (a hostile label's) go: the policy would refuse to run
// them and the sanitizer would drop them; the sanitizer still sees all that is left.
function parkStyles(markup) {
  return String(markup).replace(TAG, (tag) =>
    tag.replace(HANDLER_ATTRIBUTE, "").replace(STYLE_ATTRIBUTE, `$1${PARKED}$2`),
  );
}

function unparkStyles(root) {
  for (const el of root.querySelectorAll(`[${PARKED}]`)) {
    if ("style" in el) el.style.cssText = el.getAttribute(PARKED);
    el.removeAttribute(PARKED);
  }
  return root;
}

function inertStyle(win, doc, sheet) {
  const el = doc.createElementNS(INERT, "style");
  const text = Object.getOwnPropertyDescriptor(win.Node.prototype, "textContent");
  const keep = (value) => {
    text.set.call(el, value);
    try {
      sheet.replaceSync(String(value));
    } catch {
      // rules the page cannot take still travel in the SVG
    }
  };
  for (const name of ["textContent", "innerHTML", "innerText"]) {
    Object.defineProperty(el, name, { get: () => text.get.call(el), set: keep });
  }
  return el;
}

// Mermaid's drawing (sized by CSS) as a standalone image with a fixed size. The <svg> is
// detached: a <style> put in it is checked by no policy until it joins a page, and in an
// image it never does.
function diagramImage(win, svg, source) {
  for (const inert of [...svg.getElementsByTagNameNS(INERT, "style")]) {
    const style = svg.ownerDocument.createElementNS(SVG, "style");
    style.textContent = inert.textContent;
    inert.replaceWith(style);
  }
  const box = svg.viewBox && svg.viewBox.baseVal;
  const width = Math.ceil(box ? box.width : 0);
  const height = Math.ceil(box ? box.height : 0);
  if (!width || !height) throw new Error("empty diagram");
  svg.setAttribute("width", String(width));
  svg.setAttribute("height", String(height));
  const xml = new win.XMLSerializer().serializeToString(svg);
  const img = document.createElement("img");
  img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(xml)}`;
  img.width = width;
  img.height = height;
  img.decoding = "async";
  const title = svg.querySelector("title")?.textContent.trim();
  const desc = svg.querySelector("desc")?.textContent.trim();
  img.alt = [title, desc].filter(Boolean).join(": ") || source.trim();
  return img;
}
