// dom.js: the small DOM helpers every page uses: $ (by id), el (an
// element with attributes and children, never inline handlers or HTML)
// and clear.

export function el(tag, attrs, children) {
  const e = document.createElement(tag);
  if (attrs) for (const k of Object.keys(attrs)) {
    const v = attrs[k];
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") e.textContent = v;
    else if (k === "class") e.className = v;
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children || []) if (c !== null && c !== undefined && c !== false) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  return e;
}
export function clear(e) { e.replaceChildren(); return e; }
export const $ = (id) => document.getElementById(id);
