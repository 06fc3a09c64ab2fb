// settings.js: a page's settings: its data block and the one source of
// sampling defaults in it, the settings in the address (so an instructor
// can share a setup), and the form's strings as the protocol's sampling
// object.

export function pageData(id = "lab-data") {
  const el = document.getElementById(id);
  return el ? JSON.parse(el.textContent) : {};
}

// samplingDefaults is the server's session.DefaultSampling() plus the
// lab's prompt and token count, as every page receives them in its data
// block; no page keeps its own copy.
export function samplingDefaults(data) {
  const d = (data && data.defaults) || {};
  return { prompt: d.prompt, temperature: d.temperature, top_k: d.top_k, top_p: d.top_p, min_p: d.min_p, seed: d.seed, max_new_tokens: d.max_new_tokens };
}

// ---------- settings ⇄ URL, so an instructor can share a setup ----------
const urlKeys = { model: "model", prompt: "prompt", chat: "chat", system: "system", temperature: "t", top_k: "k", top_p: "p", min_p: "minp",
  seed: "seed", max_new_tokens: "n", stop: "stop", speed: "speed" };
export function readURL() {
  const q = new URLSearchParams(location.search), out = {};
  for (const k of Object.keys(urlKeys)) if (q.has(urlKeys[k])) out[k] = q.get(urlKeys[k]);
  return out;
}
export function writeURL(settings) {
  const q = new URLSearchParams();
  for (const k of Object.keys(urlKeys)) {
    const v = settings[k];
    if (v !== undefined && v !== null && v !== "" && v !== false) q.set(urlKeys[k], v === true ? "1" : String(v));
  }
  const url = location.pathname + "?" + q.toString();
  // while the page is in a class (following it, or trying it themselves),
  // the address keeps its ?room=CODE, so a reload comes back to the class,
  // whenever the settings are written (a reply that changes them can come
  // after the room's own handlers ran); the link returned, to share a
  // setup, never names the class
  const inClass = ["following", "branched"].includes(document.body.dataset.room);
  const room = inClass && new URLSearchParams(location.search).get("room");
  history.replaceState(null, "", room ? url + "&room=" + encodeURIComponent(room) : url);
  return location.origin + url;
}

// samplingPayload turns form strings into the protocol's sampling object.
export function samplingPayload(s) {
  return { temperature: parseFloat(s.temperature), top_k: parseInt(s.top_k, 10) || 0, top_p: parseFloat(s.top_p),
    min_p: parseFloat(s.min_p) || 0, seed: parseInt(s.seed, 10) || 0 };
}
