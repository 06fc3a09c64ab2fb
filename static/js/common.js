// common.js: what the lab and compare pages share: the websocket client,
// page data, URL settings, formatting, colors and small DOM helpers.
(function () {
  "use strict";

  function pageData() {
    var el = document.getElementById("lab-data");
    return el ? JSON.parse(el.textContent) : {};
  }

  // Client speaks inferscope's websocket protocol v1: {type, id, payload}
  // out, {type, v, seq, id, payload} in.
  function Client(onMessage, onClose) {
    this.onMessage = onMessage;
    this.onClose = onClose;
    this.nextID = 1;
    this.ws = null;
    this.ready = null;
    (window.ISClients = window.ISClients || []).push(this); // for tests and debugging
  }
  Client.prototype.connect = function () {
    var self = this;
    if (this.ws && this.ws.readyState <= 1) return this.ready;
    this.ready = new Promise(function (resolve, reject) {
      var ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
      self.ws = ws;
      ws.onmessage = function (e) {
        var msg;
        try { msg = JSON.parse(e.data); } catch (err) { return; }
        if (msg.type === "welcome") resolve(msg);
        self.onMessage(msg);
      };
      ws.onclose = function (e) {
        reject(new Error("connection closed"));
        if (self.onClose) self.onClose(e);
      };
      ws.onerror = function () { /* onclose follows */ };
    });
    return this.ready;
  };
  Client.prototype.send = function (type, payload) {
    var id = this.nextID++;
    var msg = { type: type, id: id };
    if (payload !== undefined) msg.payload = payload;
    if (!this.ws || this.ws.readyState !== 1) return -1;
    this.ws.send(JSON.stringify(msg));
    return id;
  };

  // visible shows whitespace: space ␣, tab ⇥, newline ↵.
  function visible(s) {
    if (s === undefined || s === null) return "";
    return String(s).replace(/ /g, "\u2423").replace(/\t/g, "\u21e5").replace(/\r/g, "\u240d").replace(/\n/g, "\u21b5");
  }
  // piece: a token's text for display (bytes that are part of a character show as <0xNN>).
  function pieceText(tok) {
    var t = tok.text !== undefined ? tok.text : "";
    if (tok.partial || /\ufffd/.test(t)) {
      return tok.piece;
    }
    return visible(t) || visible(tok.piece || tok.token || "");
  }

  function fmt(x, digits) {
    if (x === undefined || x === null || isNaN(x)) return "–";
    return Number(x).toFixed(digits === undefined ? 3 : digits);
  }
  function pct(x, digits) { return fmt(100 * x, digits === undefined ? 1 : digits) + "%"; }
  function bytes(n) {
    if (n >= 1 << 30) return fmt(n / (1 << 30), 2) + " GiB";
    if (n >= 1 << 20) return fmt(n / (1 << 20), 2) + " MiB";
    if (n >= 1 << 10) return fmt(n / (1 << 10), 1) + " KiB";
    return n + " B";
  }
  function count(n) {
    if (n >= 1e9) return fmt(n / 1e9, 2) + "B";
    if (n >= 1e6) return fmt(n / 1e6, 2) + "M";
    if (n >= 1e3) return fmt(n / 1e3, 1) + "K";
    return String(n);
  }

  function cssVar(name) { return getComputedStyle(document.documentElement).getPropertyValue(name).trim(); }

  // heat maps a value in [-m, m] to a diverging blue–white–red color.
  function heat(v, m) {
    var t = m > 0 ? Math.max(-1, Math.min(1, v / m)) : 0;
    var dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
    var base = dark ? [29, 32, 39] : [255, 255, 255];
    var pos = [200, 60, 50], neg = [40, 90, 200];
    var c = t >= 0 ? pos : neg, a = Math.abs(t);
    return "rgb(" + [0, 1, 2].map(function (i) { return Math.round(base[i] + (c[i] - base[i]) * a); }).join(",") + ")";
  }
  // seq maps [0,1] to a sequential color (attention, KV fill).
  function seq(v) {
    var dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
    var base = dark ? [29, 32, 39] : [255, 255, 255], top = dark ? [126, 166, 255] : [36, 86, 200];
    var a = Math.max(0, Math.min(1, v));
    return "rgb(" + [0, 1, 2].map(function (i) { return Math.round(base[i] + (top[i] - base[i]) * a); }).join(",") + ")";
  }

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) {
      if (k === "text") e.textContent = attrs[k];
      else if (k === "class") e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return e;
  }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); return e; }

  // Settings ⇄ URL query, so an instructor can share a setup.
  var urlKeys = { model: "model", prompt: "prompt", chat: "chat", system: "system", temperature: "t", top_k: "k", top_p: "p", min_p: "minp", seed: "seed", max_new_tokens: "n", stop: "stop" };
  function readURL() {
    var q = new URLSearchParams(location.search), out = {};
    Object.keys(urlKeys).forEach(function (k) { if (q.has(urlKeys[k])) out[k] = q.get(urlKeys[k]); });
    return out;
  }
  function writeURL(settings) {
    var q = new URLSearchParams();
    Object.keys(urlKeys).forEach(function (k) {
      var v = settings[k];
      if (v !== undefined && v !== null && v !== "" && v !== false) q.set(urlKeys[k], v === true ? "1" : String(v));
    });
    var url = location.pathname + "?" + q.toString();
    history.replaceState(null, "", url);
    return location.origin + url;
  }

  function chartDefaults() {
    if (!window.Chart) return;
    Chart.defaults.color = cssVar("--fg") || "#222";
    Chart.defaults.borderColor = cssVar("--border") || "#ccc";
    Chart.defaults.font.family = "system-ui, sans-serif";
    Chart.defaults.animation = false;
    Chart.defaults.maintainAspectRatio = false;
  }

  window.IS = { pageData: pageData, Client: Client, visible: visible, pieceText: pieceText, fmt: fmt, pct: pct, bytes: bytes,
    count: count, cssVar: cssVar, heat: heat, seq: seq, el: el, clear: clear, readURL: readURL, writeURL: writeURL, chartDefaults: chartDefaults };
})();
