// lab/session.js: the lab's one session with the engine — its protocol
// client (protocol.js), the reconnect backoff, the command log, and the
// resume that rebuilds a run after the connection dropped. What arrives on
// the session is messages.js's; lab.js hands the client its handlers.
import * as C from "../core.js";
import { S } from "./state.js";

// client is created before any other on the page: tests and the browser
// benchmark read window.ISClients[0] as the lab's socket.
export const client = new C.Client();
export const backoff = new C.Backoff(); // between reconnect tries

// A dropped connection loses nothing: the engine is deterministic, so one
// "resume" message with this run's start settings and its command log
// lets the server rebuild exactly the same run. S.resumeWhy says why the
// next resumed arrives (its status line says so): "reconnect" (the
// connection dropped), "back" (the back/forward cache), "branch" (Try it
// myself), "claim" (a presenter taking the room back).
export const resumedText = {
  reconnect: "Reconnected: your run was restored.",
  back: "Back on this page: your run is where you left it.",
  branch: "Your own copy of the presenter's run, at the same step: step on, force other tokens or change the settings.",
};
export function reconnect() {
  client.connect().then(() => {
    backoff.reset();
    S.resuming = true;
    S.pending = "resume";
    S.resumeWhy = S.resumeWhy || "reconnect";
    if (S.room.claim()) { S.resumeWhy = "claim"; return; } // a presenter takes the room back; the room rebuilds the run
    client.send("resume", { start: S.startP, log: S.log.slice() });
  }).catch(() => { /* onClose schedules the next try */ });
}

// logEntry is how a stepping command is written in the run's log (null:
// not logged).
export function logEntry(type, payload) {
  if (type === "rewind") return "rewind " + payload.n;
  if (type === "force") return "force " + payload.id;
  if (type === "step" || type === "step_token" || type === "run") return type;
  return null;
}
