// protocol.js: the one client of inferscope's websockets that every page
// uses — the engine sessions of protocol v1 on /ws ({type, id, payload}
// out, {type, v, seq, id, payload} in) and a class follower's link on
// /ws/room: replies matched to their command by id, the server's limits
// from its welcome, the one reconnect backoff, sockets closed while the
// page is hidden, and how the server's codes read (errors, stop reasons).
// core.js re-exports all of it; pages import core.js.

// serverLimits are the server's limits from the last welcome (null before
// the first): max_sessions_per_visitor, messages_per_second and the rest,
// as the README lists.
export let serverLimits = null;

// Backoff is the wait between reconnect attempts, shared by every socket
// (the lab's, the room link's and the follower's /ws/room): 250 ms,
// doubling each try, at most 5 s. retry(fn) runs fn after the next wait,
// reset() after a success, cancel() drops a scheduled try.
export class Backoff {
  constructor(base = 250, max = 5000) {
    this.base = base;
    this.max = max;
    this.tries = 0;
    this.timer = 0;
  }
  delay() { return Math.min(this.max, this.base * Math.pow(2, this.tries++)); }
  retry(fn) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => { this.timer = 0; fn(); }, this.delay());
  }
  cancel() { clearTimeout(this.timer); this.timer = 0; }
  reset() { this.tries = 0; }
}

// A command that streams events is answered when its last one arrives, as
// the server ends it: step with one event, step_token and force at the
// append (or a stop), run at the stop, cancel with its stop event.
const untilToken = (ev) => ev.stage === "append" || ev.stage === "stop";
const STREAMS = { step: () => true, cancel: () => true, step_token: untilToken, force: untilToken, run: (ev) => ev.stage === "stop" };

function failure(message, code) {
  const err = new Error(message);
  err.code = code;
  return err;
}

// Client is one websocket session.
//
// request(type, payload, onEvent) sends a command and returns a promise
// for its answer, matched by the command's id: the reply message (started,
// logits, samples, inspection, resampled…), or, for a command that streams
// events, the list of its events once the last has arrived, each also
// given to onEvent(event, message) as it comes. A refusal that says when
// to try again (retry_after_ms: byte_budget) is sent again then, up to
// three times. An error reply rejects
// with the server's plain-English message and its code; so does a closed
// connection (code "closed") and a request while not connected (code
// "not_connected"). Messages a request takes are not given to onMessage;
// every other message is (the welcome always), so a page that drives its
// run message by message (the lab) sends with send() and reads onMessage.
//
// new Client(onMessage, onClose, {path}) opens path instead of /ws: a
// follower's link to a class ("/ws/room?code=…", room.js), which is no
// engine session: it is not listed in window.ISClients nor counted by
// openSessions(), and its connect() settles with its first message (there
// is no welcome). A session's socket may carry a query (client.query: a
// presenter coming back names its room and key).
//
// A page holds only the sessions it uses: every client's socket is closed
// when the page is hidden (pagehide: navigating away, including into the
// back/forward cache, where a page kept its sockets open and its sessions
// counted against the visitor's limit), without calling onClose and
// without settling its requests; when the page comes back from that cache
// (pageshow, persisted) each client that was open calls its onResume, if
// the page set one (the lab resumes its run, lesson panels re-run). A
// refusal at connect (too_many_sessions, server_full) rejects connect()
// with the server's plain-English message and its code, not "connection
// closed".
export class Client {
  constructor(onMessage, onClose, opts = {}) {
    this.onMessage = onMessage || (() => {});
    this.onClose = onClose;
    this.onResume = null;
    this.path = opts.path || null; // null: an engine session on /ws
    this.nextID = 1;
    this.ws = null;
    this.ready = null;
    this.suspended = false;
    this.pending = new Map(); // command id → its request
    clients.push(this); // what pagehide closes
    if (!this.path) (window.ISClients = window.ISClients || []).push(this); // the sessions, for tests, debugging and openSessions
  }
  connect() {
    if (this.ws && this.ws.readyState <= 1) return this.ready;
    this.suspended = false;
    this.ready = new Promise((resolve, reject) => {
      // query: a presenter coming back names its room and key (room.js), so
      // it may take the session the server keeps free for it
      const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + (this.path || "/ws" + (this.query || "")));
      let refusal = null, welcomed = false;
      this.ws = ws;
      ws.onmessage = (e) => {
        let msg;
        try { msg = JSON.parse(e.data); } catch (err) { return; }
        if (msg.type === "welcome") {
          welcomed = true;
          if (msg.payload && msg.payload.limits) serverLimits = msg.payload.limits;
          resolve(msg);
        } else if (this.path && msg.type !== "error") resolve(msg); // a link's first message
        if (msg.type === "error" && !welcomed) refusal = msg.payload;
        if (this.answer(msg)) return;
        this.onMessage(msg);
      };
      ws.onclose = (e) => {
        const err = new Error(refusal ? errorText(refusal) : "connection closed");
        err.code = refusal ? refusal.code : "closed";
        reject(err);
        if (ws !== this.ws || this.suspended) return;
        this.fail(failure("the connection to the engine closed; press Run to start again", "closed"));
        if (this.onClose) this.onClose(e, refusal);
      };
      ws.onerror = () => { /* onclose follows */ };
    });
    this.ready.catch(() => {}); // a caller that drops the promise must not raise an unhandled rejection
    return this.ready;
  }
  // open reports whether the socket is connecting or open.
  open() { return !!this.ws && this.ws.readyState <= 1; }
  // send returns the command's id, or -1 when not connected.
  send(type, payload) {
    if (!this.ws || this.ws.readyState !== 1) return -1;
    const id = this.nextID++;
    const msg = { type, id };
    if (payload !== undefined) msg.payload = payload;
    this.ws.send(JSON.stringify(msg));
    return id;
  }
  request(type, payload, onEvent) {
    return new Promise((resolve, reject) => {
      const id = this.send(type, payload);
      if (id < 0) { reject(failure("not connected to the engine", "not_connected")); return; }
      this.pending.set(id, { resolve, reject, onEvent, done: STREAMS[type], events: [], type, payload, retries: 0 });
    });
  }
  // retryLater sends w's command again after the wait a refusal names
  // (byte_budget: the visitor's budget is out of debt then), under a new
  // id; false when it is not worth waiting for (no wait given, a fourth
  // refusal, or a wait over 10 s), and the refusal is the answer.
  retryLater(w, payload) {
    const after = payload && payload.retry_after_ms;
    if (!(after > 0) || after > 10000 || w.retries >= 3) return false;
    w.retries++;
    setTimeout(() => {
      const id = this.send(w.type, w.payload);
      if (id < 0) { w.reject(failure("not connected to the engine", "not_connected")); return; }
      this.pending.set(id, w);
    }, after);
    return true;
  }
  // answer gives a message to the request its id names; false when none
  // waits for it (a thinned run's detail is the page's to read).
  answer(msg) {
    const w = msg.id ? this.pending.get(msg.id) : undefined;
    if (!w || msg.type === "detail") return false;
    const settle = (f, v) => { this.pending.delete(msg.id); f(v); return true; };
    if (msg.type === "error") {
      if (this.retryLater(w, msg.payload)) { this.pending.delete(msg.id); return true; }
      return settle(w.reject, failure(errorText(msg.payload), (msg.payload || {}).code));
    }
    const evs = msg.type === "event" ? [msg.payload] : msg.type === "events" ? (msg.payload && msg.payload.events) || [] : null;
    if (!w.done || !evs) return settle(w.resolve, msg);
    for (const ev of evs) {
      w.events.push(ev);
      try { if (w.onEvent) w.onEvent(ev, msg); } catch (err) { return settle(w.reject, err); }
      if (w.done(ev)) return settle(w.resolve, w.events);
    }
    return true;
  }
  // fail rejects every request still waiting.
  fail(err) {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const w of waiting) w.reject(err);
  }
  // close closes the socket; requests still waiting reject with reason.
  close(reason) {
    this.fail(failure(reason || "the connection was closed", "closed"));
    if (this.ws) this.ws.close();
  }
  // suspend closes the socket for a hidden page without calling onClose;
  // its requests are dropped unsettled (the page runs again when shown).
  suspend() {
    if (!this.open()) return;
    this.suspended = true;
    this.pending.clear();
    this.ws.close(1000, "page hidden");
  }
}

// clients are every Client of the page, sessions and links.
const clients = [];

// openSessions counts this page's websocket sessions that are open or
// connecting (a follower's link is none).
export function openSessions() { return (window.ISClients || []).filter((c) => c.open()).length; }

if (typeof window !== "undefined") {
  window.addEventListener("pagehide", () => { clients.forEach((c) => c.suspend()); });
  window.addEventListener("pageshow", (e) => {
    if (!e.persisted) return;
    clients.forEach((c) => {
      if (!c.suspended) return;
      c.suspended = false;
      if (c.onResume) c.onResume();
    });
  });
}

// ---------- how the server's codes read: errors and stop reasons ----------

// connectText is what a page says when connect() fails: the server's own
// refusal (with what to do), or that the server cannot be reached.
export function connectText(err) {
  return err && err.code && err.code !== "closed" ? err.message : "Cannot reach the server: check that it is running, then try again.";
}

const fieldNames = { max_new_tokens: "max new tokens", top_k: "top-k", top_p: "top-p", min_p: "min-p", stop_strings: "stop strings",
  temperature: "temperature", sample_n: "sample count" };
// errorText turns a server error into a sentence for a student: the code is
// dropped and protocol field names become the labels the form shows.
export function errorText(p) {
  let m = String((p && p.message) || "something went wrong");
  m = m.replace(/\b(max_new_tokens|top_k|top_p|min_p|stop_strings|sample_n)\b/g, (f) => fieldNames[f]);
  return m.charAt(0).toUpperCase() + m.slice(1) + (/[.!?]$/.test(m) ? "" : ".");
}

// stopReason says in plain English why a run stopped (the codes stay in
// data-reason attributes and the protocol).
export function stopReason(reason, generated) {
  const n = generated === undefined ? "" : " after " + generated + (generated === 1 ? " token" : " tokens");
  switch (reason) {
    case "eos": return "the model chose its end-of-text token" + n;
    case "stop_string": return "a stop string appeared in the text" + n;
    case "max_new_tokens": return "it reached the max new tokens setting" + n;
    case "context_full": return "the context is full: the model cannot attend to more positions" + n;
    case "cancelled": return "you stopped the run" + n;
  }
  return "the run ended" + n;
}
