// colors.js: the page's colors for charts and maps: the stylesheet's
// variables (cached per color scheme), dark mode, and the diverging and
// sequential scales.

// cssVar reads a color from the stylesheet. Values are cached until the
// color scheme changes: getComputedStyle after DOM writes would force a
// style recalculation of the whole page at every draw.
const darkQuery = window.matchMedia("(prefers-color-scheme: dark)");
const varCache = new Map();
darkQuery.addEventListener("change", () => varCache.clear());
export function cssVar(name) {
  let v = varCache.get(name);
  if (v === undefined) {
    v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
    varCache.set(name, v);
  }
  return v;
}
export function isDark() { return darkQuery.matches; }
// heat maps a value in [-m, m] to a diverging blue–white–red color.
export function heat(v, m, dark = isDark()) {
  const t = m > 0 ? Math.max(-1, Math.min(1, v / m)) : 0;
  const base = dark ? [29, 32, 39] : [255, 255, 255];
  const c = t >= 0 ? [200, 60, 50] : [40, 90, 200], a = Math.abs(t);
  return "rgb(" + [0, 1, 2].map((i) => Math.round(base[i] + (c[i] - base[i]) * a)).join(",") + ")";
}
// seq maps [0,1] to a sequential color (attention, probabilities).
export function seq(v, dark = isDark()) {
  const base = dark ? [29, 32, 39] : [255, 255, 255], top = dark ? [126, 166, 255] : [36, 86, 200];
  const a = Math.max(0, Math.min(1, v));
  return "rgb(" + [0, 1, 2].map((i) => Math.round(base[i] + (top[i] - base[i]) * a)).join(",") + ")";
}
