// lab.js: the step-through lab's entry: it wires the modules in lab/ and
// the classroom together and starts the page. Every number the lab draws
// arrives in an engine event over the websocket; the modules split the
// work by job:
//   lab/state.js     the one state object (S)
//   lab/session.js   the session with the engine: client, backoff, resume
//   lab/messages.js  what arrives: messages and events folded into S
//   lab/frame.js     frame scheduling: at most one drawing per frame
//   lab/draw.js      the panels, the model view and the status line
//   lab/controls.js  the form, buttons, keys and the commands they send
import * as C from "./core.js";
import { initRoom } from "./room.js";
import { S, setRunState } from "./lab/state.js";
import { client, reconnect } from "./lab/session.js";
import { onMessage, onClosed, onResumed } from "./lab/messages.js";
import { mark, usePanels } from "./lab/frame.js";
import { draw, actions, setStatus } from "./lab/draw.js";
import { wireControls, fillForm, settings, startPayload, formFromStart, start, stopPaced, setButtons, force } from "./lab/controls.js";

setRunState("idle");
// the frames draw the panels, and the buttons when a hook marks them
usePanels(Object.assign({ buttons: setButtons }, draw));
actions.force = force;
client.onMessage = onMessage;
client.onClose = onClosed;
client.onResume = onResumed;
wireControls();

// ---------- classroom (room.js): present, follow, try it myself ----------
S.room = initRoom({
  client,
  deliver: onMessage,
  // the class request starts from what the form shows (a plain prompt)
  classDefaults: () => { const s = settings(), p = startPayload(s); return { prompt: s.prompt, max_new_tokens: p.max_new_tokens, sampling: p.sampling, model: p.model }; },
  current: () => ({ start: S.startP, log: S.log.slice() }),
  top: () => (S.run.logits ? S.run.logits.top : []),
  setStatus,
  settings,
  setForm: formFromStart,
  setFollowing(on) {
    S.following = on;
    if (on) { stopPaced(); S.pending = null; S.resuming = false; client.close(); }
    mark("buttons");
  },
  // adopt: the room's run becomes this page's (a presenter's reclaim)
  adopt(start, l) {
    if (start) { S.startP = start; S.log = l.slice(); formFromStart(start); return; }
    if (S.pending === "resume") { S.pending = null; S.resuming = false; mark("buttons"); }
  },
  // branch: a private copy of the presenter's run, rebuilt by resume
  branch(start, l) {
    S.following = false;
    S.startP = start;
    S.log = l.slice();
    S.pendingStart = null;
    S.pending = "resume"; // busy until the private copy is rebuilt
    S.resuming = true;
    S.resumeWhy = "branch";
    setButtons(); // busy at once (not at the next frame), so no click lands before the copy is rebuilt
    formFromStart(start);
    reconnect();
  },
});

fillForm();
setButtons();
mark("reset");
if (!S.room.following) client.connect().then(() => {
  setStatus("Connected. Press Start.");
  if (S.room.claim()) { S.resuming = true; S.pending = "resume"; S.resumeWhy = "claim"; return; }
  if (C.readURL().prompt !== undefined) start();
}).catch((err) => setStatus(C.connectText(err), true));
