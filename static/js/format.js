// format.js: how numbers read on every page: fixed digits, percentages,
// byte sizes, counts and durations in milliseconds.

export function fmt(x, digits = 3) {
  if (x === undefined || x === null || Number.isNaN(+x)) return "–";
  return Number(x).toFixed(digits);
}
export function pct(x, digits = 1) { return fmt(100 * x, digits) + "%"; }
export function bytes(n) {
  if (n >= 1 << 30) return fmt(n / (1 << 30), 2) + " GiB";
  if (n >= 1 << 20) return fmt(n / (1 << 20), 2) + " MiB";
  if (n >= 1 << 10) return fmt(n / (1 << 10), 1) + " KiB";
  return n + " B";
}
export function count(n) {
  if (n >= 1e9) return fmt(n / 1e9, 2) + "B";
  if (n >= 1e6) return fmt(n / 1e6, 2) + "M";
  if (n >= 1e3) return fmt(n / 1e3, 1) + "K";
  return String(n);
}
// ms formats a duration in milliseconds with sensible digits.
export function ms(x) { return x >= 100 ? fmt(x, 0) : x >= 10 ? fmt(x, 1) : fmt(x, 2); }
