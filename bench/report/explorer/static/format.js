/* Numbers as the reports write them, and the few DOM helpers the page needs
   (elements, tables with captions and header cells, for screen readers). */
"use strict";

const Format = {
  DASH: "–",

  /** req/s and other counts: thousands separated, no decimals. */
  count(value) {
    if (value === null || value === undefined) return Format.DASH;
    return Math.round(value).toLocaleString("en-US");
  },

  /** Milliseconds and other small figures: 3 significant digits, at most 1 decimal past 100. */
  small(value) {
    if (value === null || value === undefined) return Format.DASH;
    if (Math.abs(value) >= 100) return value.toLocaleString("en-US", {maximumFractionDigits: 1});
    return Number(value.toPrecision(3)).toLocaleString("en-US", {maximumFractionDigits: 3});
  },

  /** A value with its interval: "1,234 (1,100–1,300)". */
  withInterval(value, interval, format) {
    if (value === null || value === undefined) return "–";  // no figure: a ratio to a capacity of 0
    const text = format(value);
    if (!interval) return text;
    return `${text} (${format(interval[0])}–${format(interval[1])})`;
  },

  /** A dimension's value as the page shows it, with its unit or else its
      name ("20 ms", "100 clients"); null (a closed-loop peak's rate) is "wrk peak". */
  dim(value, dim) {
    if (value === null || value === undefined) return "wrk peak (closed loop)";
    return `${Format.small(value)} ${dim.unit || dim.label}`;
  },
};

/** An element: el("td", {class: "number"}, "12"); children may be nodes or text. */
function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** A table: caption, header (strings), rows (arrays of cells: text, a node,
    or {text, number: true, class}); the first cell of each row is its header. */
function table(caption, header, rows) {
  const head = el("thead", {}, el("tr", {}, header.map((name) => el("th", {scope: "col"}, name))));
  const body = el("tbody", {}, rows.map((row) => el("tr", {}, row.map((cell, index) => {
    const spec = cell !== null && typeof cell === "object" && !(cell instanceof Node) ? cell : {text: cell};
    const classes = [spec.number ? "number" : "", spec.class || ""].join(" ").trim();
    const tag = index === 0 ? "th" : "td";
    return el(tag, {scope: index === 0 ? "row" : null, class: classes || null}, spec.text);
  }))));
  return el("table", {}, el("caption", {}, caption), head, body);
}

/** Replace a container's content. */
function show(container, ...children) {
  container.replaceChildren(...children.flat().filter((child) => child !== null && child !== undefined));
}
