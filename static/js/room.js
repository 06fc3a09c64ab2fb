// room.js: the classroom. A presenter opens a room ("Present to a class")
// from the lab, compare or a lesson and gets a join code, link and QR code;
// students who join (/join → the presenter's page with ?room=CODE) follow
// the presenter live through their own follower socket, which can only
// vote, branch ("Try it myself") and come back ("Back to the class"). The
// lab follows the presenter's run event by event; compare and lessons
// follow what the presenter's page shows (its "page state": compare's
// results, a lesson's section and its panels), drawn again here. Each page
// hands this module a few hooks (kind "lab": lab.js; "compare": compare.js;
// "lesson": lessons.js); the room messages are described in
// web/roomproto.go.
import * as C from "./core.js";
import { setChartScale } from "./charts.js";
import { presenterPanel, studentRequest } from "./classrequest.js";

const KEY = "inferscope-room"; // sessionStorage: only the presenter's own tab holds the key
const BAR_KEY = "inferscope-room-bar"; // sessionStorage: the class bar collapsed or open
const LARGE_KEY = "inferscope-large-type"; // sessionStorage: large type on the lab and compare
const LARGE_CHARTS = 1.5; // how much larger charts draw in large type
const $ = C.$;

// ---------- large type, for a projector ----------
// The page's text grows (html.large-type, room.css) and so do the charts'
// (charts.js draws them larger); remembered for the tab.
export function largeType() { return sessionStorage.getItem(LARGE_KEY) === "1"; }
export function setLargeType(on) {
  if (on) sessionStorage.setItem(LARGE_KEY, "1"); else sessionStorage.removeItem(LARGE_KEY);
  document.documentElement.classList.toggle("large-type", on);
  setChartScale(on ? LARGE_CHARTS : 1);
  const b = $("btn-large-type");
  if (b) b.setAttribute("aria-pressed", String(on));
}

function countsText(c) {
  return c.followers + (c.followers === 1 ? " student follows" : " students follow") + (c.branched ? " · " + c.branched + " trying it themselves" : "");
}

// ---------- the join screen: the code and QR code filling the projector ----------
let joinScreen = null, joinOpener = null, joinKeys = false;
function openJoinScreen(code, link) {
  if (!joinScreen) {
    const close = C.el("button", { type: "button", class: "join-screen-close", id: "btn-join-close", "data-testid": "btn-join-close", text: "Close (Esc)" });
    joinScreen = C.el("div", { class: "join-screen", id: "join-screen", "data-testid": "join-screen", role: "dialog", "aria-modal": "true",
      "aria-labelledby": "join-screen-title", "aria-describedby": "join-screen-how", hidden: true }, [
      C.el("div", { class: "join-screen-inner" }, [
        C.el("img", { class: "join-screen-qr", "data-testid": "join-screen-qr", src: "/join/qr.svg?code=" + code, alt: "QR code of the join link " + link, width: "480", height: "480" }),
        C.el("div", { class: "join-screen-text" }, [
          C.el("h2", { id: "join-screen-title", class: "join-screen-title", text: "Join the class" }),
          C.el("p", { class: "join-screen-code mono", "data-testid": "join-screen-code", text: code }),
          C.el("p", { class: "join-screen-how", id: "join-screen-how" }, ["Scan the code, open ", C.el("b", { class: "join-screen-url", "data-testid": "join-screen-url", text: link }),
            ", or go to ", C.el("b", { text: location.host + "/join" }), " and type the code."]),
          C.el("p", { class: "join-screen-counts", id: "join-screen-counts", role: "status", text: $("room-counts") ? $("room-counts").textContent : "" }),
          close,
        ]),
      ]),
    ]);
    document.body.appendChild(joinScreen);
    close.addEventListener("click", closeJoinScreen);
    if (!joinKeys) {
      // first in line for keys while open: the page's own keys (the lab's
      // Escape resets its run, a lesson's arrows change section) wait
      joinKeys = true;
      window.addEventListener("keydown", (e) => {
        if (!joinScreen || joinScreen.hidden) return;
        if (e.key === "Escape") { e.preventDefault(); e.stopImmediatePropagation(); closeJoinScreen(); return; }
        if (e.key === "Tab") { e.preventDefault(); $("btn-join-close").focus(); return; } // the close button is the dialog's only control
        if (e.key !== "Enter" && e.key !== " ") e.stopImmediatePropagation();
      }, true);
    }
  }
  joinOpener = document.activeElement;
  joinScreen.hidden = false;
  document.body.classList.add("join-screen-open");
  // the rest of the page is out of reach while the dialog is open
  inerted = [...document.body.children].filter((e) => e !== joinScreen && !e.inert && e.tagName !== "SCRIPT");
  for (const e of inerted) e.inert = true;
  $("btn-join-close").focus();
}
let inerted = [];
// dropJoinScreen: the class has ended (a new one gets a screen of its own)
function dropJoinScreen() {
  closeJoinScreen();
  if (joinScreen) joinScreen.remove();
  joinScreen = null;
}
function closeJoinScreen() {
  if (!joinScreen || joinScreen.hidden) return;
  joinScreen.hidden = true;
  document.body.classList.remove("join-screen-open");
  for (const e of inerted) e.inert = false;
  inerted = [];
  if (joinOpener && joinOpener.isConnected) joinOpener.focus();
  joinOpener = null;
}

export function initRoom(page) {
  const code = new URLSearchParams(location.search).get("room");
  const bar = C.el("section", { id: "room-bar", class: "card room-bar", "data-testid": "room-bar", "aria-label": "Class" });
  const css = C.el("link", { rel: "stylesheet", href: "/static/css/room.css" });
  document.head.appendChild(css);
  page.kind = page.kind || "lab";
  if (page.kind === "lab") {
    const host = document.querySelector(".lab") || $("main");
    host.insertBefore(bar, host.firstChild);
  } else {
    const h1 = $("main").querySelector("h1");
    if (h1) h1.after(bar); else $("main").prepend(bar);
    page.setStatus = page.setStatus || (() => {});
  }
  return code ? follower(page, bar, code.toUpperCase()) : presenter(page.kind === "lab" ? page : pageLink(page), bar);
}

// pageLink gives compare and lesson pages, which have no session of their
// own to present, a /ws connection that only carries the room's commands.
function pageLink(page) {
  let handler = () => {};
  const backoff = new C.Backoff();
  const client = new C.Client((m) => handler(m), () => {
    // reconnect and take the room back (claim), as the lab does
    if (!link.keep()) return;
    backoff.retry(() => client.connect().then(() => { backoff.reset(); link.onReconnect(); }).catch(() => {}));
  });
  const link = Object.assign({}, page, {
    client,
    current: () => ({}),
    top: () => [],
    adopt() {},
    onReconnect() {},
    keep: () => false,
    listen(fn) { handler = fn; },
  });
  return link;
}

// ---------- presenter ----------
function presenter(lab, bar) {
  let room = null;
  try { room = JSON.parse(sessionStorage.getItem(KEY) || "null"); } catch (e) { room = null; }
  // a presenter's connections name the room and key: coming back, this
  // page may take the session the server keeps free for it
  const reclaimQuery = () => { lab.client.query = room ? "?room=" + encodeURIComponent(room.code) + "&key=" + encodeURIComponent(room.key) : ""; };
  reclaimQuery();
  let claimed = false;
  const isLab = lab.kind === "lab", isLesson = lab.kind === "lesson";
  window.ISClassHook = { following: () => false, answer: () => false };
  const btn = C.el("button", { type: "button", id: "btn-present", "data-testid": "btn-present", text: "Present to a class" });
  const buttons = lab.buttons || document.querySelector("#controls .buttons");
  if (buttons) buttons.appendChild(btn);
  bar.hidden = true;
  const pageState = () => (lab.state ? lab.state() : undefined);
  btn.addEventListener("click", () => {
    if (room) return;
    lab.client.connect().then(() => {
      const cur = lab.current();
      const p = { page: location.pathname };
      if (cur.start) { p.start = cur.start; p.log = cur.log; }
      if (!isLab) p.state = pageState();
      lab.client.send("room_open", p);
    }).catch(() => lab.setStatus("Cannot reach the server.", true));
  });
  const send = (type, extra) => room && lab.client.send(type, Object.assign({ code: room.code, key: room.key }, extra || {}));
  // changed: compare and lessons tell the class what they show now (at most every 100 ms)
  let pendingState = 0;
  function changed() {
    if (!room || !claimed || isLab || pendingState) return;
    pendingState = setTimeout(() => { pendingState = 0; send("room_page", { page: location.pathname, state: pageState() }); }, 100);
  }

  // the class bar: one line (code, counts, the join screen, large type,
  // collapse) over the details (QR code, link, tools); collapsed, only the
  // line shows, so the page's own controls stay above the fold
  let collapsed = sessionStorage.getItem(BAR_KEY) === "collapsed";
  function collapse(on) {
    collapsed = on;
    sessionStorage.setItem(BAR_KEY, on ? "collapsed" : "open");
    bar.classList.toggle("collapsed", on);
    bar.dataset.collapsed = on ? "1" : "0";
    const b = $("btn-room-collapse");
    if (b) {
      b.setAttribute("aria-expanded", String(!on));
      b.textContent = on ? "Show class details" : "Hide class details";
    }
  }
  function draw(counts) {
    bar.hidden = !room;
    btn.hidden = !!room;
    if (!room) { dropJoinScreen(); return; }
    if (!bar.firstChild) {
      const link = location.origin + "/join?code=" + room.code;
      bar.append(
        C.el("img", { src: "/join/qr.svg?code=" + room.code, alt: "QR code of the join link " + link, width: "132", height: "132", "data-testid": "room-qr", class: "room-qr" }),
        C.el("div", { class: "room-line" }, [
          C.el("p", { class: "room-title" }, ["Class code ", C.el("b", { class: "room-code mono", "data-testid": "room-code", text: room.code })]),
          C.el("p", { class: "small room-counts", id: "room-counts", "data-testid": "room-counts", role: "status", text: "Nobody has joined yet." }),
          C.el("div", { class: "room-line-tools" }, [
            C.el("button", { type: "button", id: "btn-join-screen", "data-testid": "btn-join-screen", "aria-haspopup": "dialog", text: "Show join screen" }),
            isLab || lab.kind === "compare" ? C.el("button", { type: "button", id: "btn-large-type", "data-testid": "btn-large-type", "aria-pressed": "false", title: "Larger text and charts for a projector", text: "Large type" }) : null,
            C.el("button", { type: "button", id: "btn-room-collapse", "data-testid": "btn-room-collapse", "aria-expanded": "true", "aria-controls": "room-details", text: "Hide class details" }),
          ]),
        ]),
        C.el("div", { class: "room-details", id: "room-details" }, [
          C.el("p", { class: "small" }, ["Students open ", C.el("a", { href: link, "data-testid": "room-join-url", text: link }), " or go to /join and type the code."]),
          /^(localhost|127\.|\[::1\])/.test(location.host) ? C.el("p", { class: "small muted", text: "This page uses a local address: students need this computer's network address instead (serve --addr and --allow-host)." }) : null,
          C.el("div", { class: "room-tools" }, [
            isLab ? C.el("button", { type: "button", id: "btn-poll", "data-testid": "btn-poll", text: "Ask: which token comes next?" }) : null,
            isLesson ? C.el("button", { type: "button", id: "btn-poll", "data-testid": "btn-poll", text: "Ask the class this section's question" }) : null,
            isLab || isLesson ? C.el("button", { type: "button", id: "btn-reveal", "data-testid": "btn-reveal", text: "Reveal the answers", disabled: true }) : null,
            C.el("button", { type: "button", id: "btn-class", "data-testid": "btn-class", "aria-expanded": "false", "aria-controls": "room-class", text: "Send a request from every student" }),
            C.el("button", { type: "button", id: "btn-recall", "data-testid": "btn-recall", text: "Bring everyone back" }),
            C.el("button", { type: "button", id: "btn-close-room", "data-testid": "btn-close-room", text: "End the class" }),
          ]),
        ]),
        C.el("div", { id: "room-poll", class: "room-poll", "data-testid": "room-poll" }),
        C.el("div", { id: "room-class", class: "room-class", hidden: true }),
        C.el("details", { id: "room-networks", class: "room-networks small", "data-testid": "room-networks", hidden: true }, [
          C.el("summary", { id: "room-networks-summary", text: "Networks" }),
          C.el("p", { class: "muted", text: "Where your students connect from, as anonymous names (never addresses). A class behind one school network is one line; a line you do not expect can be removed: its students leave and cannot join this class again." }),
          C.el("ul", { id: "room-networks-list", class: "room-networks-list" }),
        ]));
      if (isLab || isLesson) {
        $("btn-poll").addEventListener("click", isLab ? ask : askQuestion);
        $("btn-reveal").addEventListener("click", () => send("room_reveal", { reveal: revealLines() }));
      }
      $("btn-recall").addEventListener("click", () => send("room_recall"));
      $("btn-class").addEventListener("click", () => showClass(!classOpen));
      $("btn-close-room").addEventListener("click", () => send("room_close"));
      $("btn-join-screen").addEventListener("click", () => openJoinScreen(room.code, link));
      $("btn-room-collapse").addEventListener("click", () => collapse(!collapsed));
      if ($("btn-large-type")) {
        $("btn-large-type").addEventListener("click", () => setLargeType(!largeType()));
        setLargeType(largeType());
      }
      collapse(collapsed);
    }
    if (counts) {
      $("room-counts").textContent = countsText(counts);
      $("room-counts").dataset.followers = counts.followers;
      $("room-counts").dataset.branched = counts.branched;
      if (counts.poll) drawPoll($("room-poll"), counts.poll, null, true);
      if (isLab || isLesson) $("btn-reveal").disabled = !(counts.poll && counts.poll.open);
      const js = $("join-screen-counts");
      if (js) js.textContent = countsText(counts);
      drawNetworks(counts.networks || []);
    }
  }
  // drawNetworks lists the students per network; Remove asks once more
  // before it acts (a second press within 5 s)
  let armed = null;
  function drawNetworks(nets) {
    const box = $("room-networks"), list = $("room-networks-list");
    const focused = document.activeElement && list.contains(document.activeElement) ? document.activeElement.dataset.network : null;
    box.hidden = nets.length === 0;
    $("room-networks-summary").textContent = nets.length === 1 ? "Students from 1 network" : "Students from " + nets.length + " networks";
    list.replaceChildren(...nets.map((n) => {
      const who = n.students + (n.students === 1 ? " student" : " students");
      const b = C.el("button", { type: "button", class: "room-remove", "data-testid": "btn-remove-network", "data-network": n.id,
        "aria-label": "Remove network " + n.id + " (" + who + ") from the class", text: armed === n.id ? "Press again to remove " + who : "Remove" });
      b.addEventListener("click", () => {
        if (armed !== n.id) {
          armed = n.id;
          b.textContent = "Press again to remove " + who;
          setTimeout(() => { if (armed === n.id) { armed = null; b.textContent = "Remove"; } }, 5000);
          return;
        }
        armed = null;
        send("room_remove", { network: n.id });
        lab.setStatus("Removed network " + n.id + ": its " + who + " left the class and cannot join it again.");
      });
      if (n.id === focused) requestAnimationFrame(() => b.focus()); // a redraw keeps a keyboard user's place
      return C.el("li", { "data-testid": "room-network" }, [C.el("span", { text: "Network " }), C.el("b", { class: "mono", text: n.id }), C.el("span", { text: ": " + who + " " }), b]);
    }));
  }
  // the class request: its panel opens in the bar (or in a lesson section
  // that hosts it: mountClass); its messages come on the presenter's connection
  let classPanel = null, classOpen = false, classPending = false;
  function classPanelNow() {
    if (!classPanel) {
      classPanel = presenterPanel({
        send: (type, p) => { classPending = true; send(type, p); },
        defaults: () => (lab.classDefaults ? lab.classDefaults() : {}),
        onState: (st) => { classPending = false; if (window.ISClass && window.ISClass.onState) window.ISClass.onState(st); },
      });
    }
    return classPanel;
  }
  function showClass(on, host) {
    classOpen = on;
    const box = $("room-class"), b = $("btn-class");
    if (b) b.setAttribute("aria-expanded", String(on));
    if (!on) { if (box) box.hidden = true; return; }
    const p = classPanelNow();
    if (host) { host.appendChild(p.el); if (box) box.hidden = true; return; }
    if (box) { box.hidden = false; if (p.el.parentElement !== box) box.appendChild(p.el); }
  }
  // a lesson section that teaches with it (the after-send lesson's busy
  // server) asks for the panel while this page presents
  window.ISClass = {
    presenting: () => !!room, // a stored room counts before its claim completes (the panels run first)
    mount(host) { showClass(true, host); return classPanelNow(); },
    onState: null,
  };
  // asked: what the open question came from, for its reveal (the lab's
  // candidates with the model's probabilities, or a lesson's question form)
  let asked = null;
  function ask() {
    const top = (lab.top() || []).slice(0, 4);
    if (top.length < 2) { lab.setStatus("Step to the logits first: the question offers the model's top candidates.", true); return; }
    asked = { top };
    send("room_poll", { question: "Which token will the model choose next?", options: top.map((t) => C.tokenLabel(t)) });
  }
  // askQuestion asks the class the visible section's predict-first question:
  // every student answers on their own device
  function askQuestion() {
    const form = document.querySelector(".lesson-section:not([hidden]) form.question[data-exercise='0']");
    if (!form) { lab.setStatus("This section has no predict-first question to ask.", true); return; }
    const kind = form.dataset.kind, p = { question: form.dataset.ask, kind };
    if (kind === "choice") {
      p.options = [...form.querySelectorAll("input[type=radio]")].map((r) => r.value);
      if (p.options.length < 2) { lab.setStatus("The question's choices are still being computed: ask again in a moment.", true); return; }
    }
    asked = { form, options: p.options };
    send("room_poll", p);
  }
  // revealLines: what the model says, beside the class's answers: the
  // model's probability of each candidate (lab), or the panel's answer
  // (lessons: the presenter's own question is revealed too, so the panel
  // uncovers for everyone)
  function revealLines() {
    if (!asked) return [];
    if (asked.top) return asked.top.map((t) => "model: " + C.pct(t.prob_kept !== undefined ? t.prob_kept : t.prob) + " (p the draw uses)");
    const f = asked.form, skip = f.querySelector('[data-testid="q-skip"]');
    if (f.dataset.state === "open" && skip && !skip.disabled) skip.click();
    const real = f.querySelector('[data-testid="q-result"]').dataset.real;
    if (!real) return [];
    // a choice: the line beside the option the panel shows; else the answer itself
    if (asked.options) return asked.options.map((o) => (o === real ? "the panel's answer" : ""));
    return [String(real).slice(0, 80)];
  }
  function forget(reason) {
    room = null;
    reclaimQuery();
    claimed = false;
    sessionStorage.removeItem(KEY);
    if (!isLab) lab.client.close();
    bar.replaceChildren();
    if (largeType()) setLargeType(false);
    draw();
    if (reason) lab.setStatus("The class has ended: " + reason, false);
  }
  draw();
  const api = {
    following: false,
    changed,
    // claim: after (re)connecting, a presenter takes its room back with the
    // key; the class moves to this page
    claim() {
      if (!room) return false;
      const p = { code: room.code, key: room.key, page: location.pathname };
      if (!isLab) p.state = pageState();
      lab.client.send("room_claim", p);
      return true;
    },
    onMessage(msg) {
      const p = msg.payload || {};
      switch (msg.type) {
        case "room_opened":
          room = { code: p.code, key: p.key };
          reclaimQuery();
          sessionStorage.setItem(KEY, JSON.stringify(room));
          lab.adopt(p.start, p.log || []);
          claimed = true;
          draw();
          lab.setStatus(isLab ? "Presenting class " + p.code + ": every step you take appears on your students' screens." :
            "Presenting class " + p.code + ": your students see this page as you use it.");
          return true;
        case "room_counts":
          draw(p);
          return true;
        case "room_class_state":
          classPanelNow().onState(p);
          return true;
        case "room_closed":
          forget(p.reason);
          return true;
      }
      return false;
    },
    onError(p) {
      if (room && ["room_not_found", "room_closed", "bad_key"].includes(p.code)) { forget(""); lab.adopt(null, []); }
      if (classPanel && (p.code === "class_too_big" || classPending)) { classPending = false; classPanel.onError(p); return true; }
      return false;
    },
  };
  if (!isLab) {
    // compare and lessons: the room's own connection; a stored room is claimed at once
    lab.listen((msg) => {
      if (msg.type === "error") { api.onError(msg.payload || {}); if (!room) lab.setStatus(C.errorText(msg.payload || {}), true); return; }
      api.onMessage(msg);
    });
    lab.onReconnect = () => api.claim();
    lab.keep = () => !!room;
    if (room) lab.client.connect().then(() => api.claim()).catch(() => lab.setStatus("Cannot reach the server.", true));
  }
  return api;
}

// drawPoll shows a poll: the options as buttons (students, while open) or
// bars with counts (the presenter, and everyone after the reveal).
function drawPoll(box, poll, onVote, presenter, mine, onAnswer, answerHere) {
  C.clear(box);
  if (!poll) return;
  box.dataset.poll = poll.id;
  box.dataset.open = poll.open ? "1" : "0";
  box.dataset.kind = poll.kind || "choice";
  box.appendChild(C.el("p", { class: "room-question", "data-testid": "poll-question", text: poll.question }));
  const total = poll.votes || 0;
  if (answerHere && poll.open && !presenter) {
    box.appendChild(C.el("p", { class: "small muted", text: "Answer in the question on this page; the presenter reveals the answers." }));
    return;
  }
  if (poll.kind === "number" || poll.kind === "text") { drawOpenPoll(box, poll, presenter, mine, onAnswer); return; }
  const list = C.el("ul", { class: "room-options" });
  poll.options.forEach((o, i) => {
    const n = poll.counts ? poll.counts[i] || 0 : null;
    const said = poll.reveal && poll.reveal[i] ? " · " + poll.reveal[i] : "";
    const label = o + (n !== null ? " — " + n + (n === 1 ? " student" : " students") + (total ? " (" + Math.round(100 * n / total) + "%)" : "") : "") + said;
    let item;
    if (onVote && poll.open) {
      item = C.el("button", { type: "button", class: "poll-option" + (mine === i ? " chosen" : ""), "data-testid": "poll-option", "data-option": i, "aria-pressed": mine === i ? "true" : "false", text: o });
      item.addEventListener("click", () => onVote(i));
    } else {
      item = C.el("span", { class: "poll-result" + (mine === i ? " chosen" : ""), "data-testid": "poll-result", "data-option": i, "data-count": n === null ? "" : n, "data-reveal": poll.reveal && poll.reveal[i] ? poll.reveal[i] : "" });
      const fill = C.el("span", { class: "poll-fill" });
      fill.style.width = (total ? 100 * (n || 0) / total : 0) + "%";
      item.append(fill, C.el("span", { class: "poll-label mono", text: label }));
    }
    list.appendChild(C.el("li", {}, [item]));
  });
  box.appendChild(list);
  box.appendChild(C.el("p", { class: "small muted", text: poll.open ? (presenter ? total + " answered so far. Reveal, then step to see the model's choice." : "Pick your guess; the presenter reveals the answers.") :
    total + " answered." + (poll.reveal && poll.reveal.some((r) => r) ? " Beside the answers: what the model says." : " The model's own choice appears when the presenter steps to the sample stage.") }));
}

// drawOpenPoll: a question each student answers by typing (a number or a
// few words): a box to answer (students, while open), the class's answers
// as bars, most given first (the presenter live, everyone after the
// reveal), and what the model says beside them.
function drawOpenPoll(box, poll, presenter, mine, onAnswer) {
  const total = poll.votes || 0;
  if (poll.open && !presenter) {
    const sent = typeof mine === "string"; // a typed answer already sent (a choice is an index, -1 none)
    const input = C.el("input", { type: "text", inputmode: poll.kind === "number" ? "decimal" : "text", autocomplete: "off", "aria-label": "Your answer", "data-testid": "poll-answer", value: sent ? mine : "" });
    const f = C.el("form", { class: "poll-answer-form" }, [input, C.el("button", { type: "submit", class: "primary", "data-testid": "poll-send", text: sent ? "Change my answer" : "Send my answer" })]);
    f.addEventListener("submit", (e) => { e.preventDefault(); if (input.value.trim()) onAnswer(input.value.trim()); });
    box.append(f, C.el("p", { class: "small muted", text: sent ? "Sent: " + mine + ". You can change it until the presenter reveals." : "Type your answer; the presenter reveals the answers." }));
    return;
  }
  const answers = poll.answers || [];
  if (poll.reveal && poll.reveal.length) box.appendChild(C.el("p", { class: "room-reveal", "data-testid": "poll-reveal", text: "The answer: " + poll.reveal.join(", ") }));
  const top = Math.max(1, ...answers.map((a) => a.n));
  const list = C.el("ul", { class: "room-options" });
  for (const a of answers) {
    const right = poll.reveal && poll.reveal.some((r) => String(r).trim().toLowerCase() === a.text || parseFloat(r) === parseFloat(a.text));
    const item = C.el("span", { class: "poll-result" + (right ? " chosen" : ""), "data-testid": "poll-result", "data-answer": a.text, "data-count": a.n });
    const fill = C.el("span", { class: "poll-fill" });
    fill.style.width = (100 * a.n / top) + "%";
    item.append(fill, C.el("span", { class: "poll-label mono", text: a.text + " — " + a.n + (a.n === 1 ? " student" : " students") + (right ? " ✓" : "") }));
    list.appendChild(C.el("li", {}, [item]));
  }
  if (poll.other) list.appendChild(C.el("li", { class: "small muted", text: "other answers — " + poll.other }));
  box.appendChild(list);
  box.appendChild(C.el("p", { class: "small muted", text: poll.open ? total + " answered so far." : total + " answered." }));
}

// ---------- follower ----------
function follower(lab, bar, code) {
  let branched = false, ended = false, lastLog = null, poll = null, mine = -1;
  const backoff = new C.Backoff(); // between tries to reach the class again
  const isLab = lab.kind === "lab";
  let lastPage = null; // the presenter's page and state (room_page)
  const status = C.el("p", { id: "room-status", class: "room-title", "data-testid": "room-status", role: "status", text: "Joining class " + code + "…" });
  const tryBtn = C.el("button", { type: "button", id: "btn-try", "data-testid": "btn-try", class: "primary", text: "Try it myself", disabled: true });
  const backBtn = C.el("button", { type: "button", id: "btn-back", "data-testid": "btn-back", text: "Back to the class", hidden: true });
  const pollBox = C.el("div", { id: "room-poll", class: "room-poll", "data-testid": "room-poll" });
  // the class request this device sent (classrequest.js)
  const mineBox = C.el("section", { id: "class-mine", class: "class-mine", "data-testid": "class-mine", "aria-live": "polite", hidden: true });
  let mineReq = null;
  bar.append(C.el("div", { class: "room-join" }, [status]), C.el("div", { class: "room-tools" }, [tryBtn, backBtn]),
    C.el("p", { class: "small muted", text: isLab ? "Following shows the presenter's run; “Try it myself” gives you a private copy at the same step, to force other tokens or change settings." :
      lab.kind === "compare" ? "Following shows the presenter's comparison; “Try it myself” keeps the presenter's settings in the form so you can change them and run both sides yourself." :
        "Following shows the section the presenter is on and the presenter's live panels; “Try it myself” runs the panels on your own, with your own prompts, and lets you move between sections." }), pollBox, mineBox);
  document.body.dataset.room = "following";
  lab.setFollowing(true);

  // the follower's link to the class (/ws/room, protocol.js's Client: no
  // engine session). A page in the back/forward cache is nobody's screen:
  // the client closes its socket (the class no longer counts it) and it
  // opens again when the page is shown (onResume).
  const link = new C.Client(onMessage, () => {
    if (ended) return;
    status.textContent = "Connection to the class lost; reconnecting…";
    backoff.retry(connect);
  }, { path: "/ws/room?code=" + encodeURIComponent(code) });
  link.onResume = () => { backoff.reset(); connect(); };
  const send = (type, payload) => { link.send(type, payload); };
  // connect opens the link (one socket per page: the client keeps an open
  // one, which would otherwise count this student twice)
  function connect() {
    backoff.cancel();
    if (ended) return;
    link.connect();
  }
  // the page's "Link to this setup" (lab, compare) links to the settings
  // the form shows (the presenter's while following, the student's own
  // after "Try it myself"), never to this class; the address keeps
  // ?room=CODE, so a reload comes back to the class
  const share = $("share");
  const settingsNow = () => (lab.settings ? lab.settings() : lab.state ? (lab.state() || {}).settings : null);
  function shareLink() {
    const s = share && settingsNow();
    if (!s) return;
    const here = location.href;
    share.href = C.writeURL(s);
    history.replaceState(null, "", here);
  }
  // (the address keeps ?room=CODE by itself: settings.js's writeURL keeps
  // it while the page follows the class or has branched from it)
  if (share) {
    share.addEventListener("pointerenter", shareLink);
    share.addEventListener("focus", shareLink);
  }

  // goTo: the class is on another page: follow it there (not while trying it ourselves)
  function goTo(page) {
    if (!page || page === location.pathname || branched || ended) return false;
    ended = true; // this page's socket is done
    location.replace(page + "?room=" + encodeURIComponent(code));
    return true;
  }
  function onMessage(msg) {
    const p = msg.payload || {};
    switch (msg.type) {
      case "room_joined":
        backoff.reset();
        if (goTo(p.page)) return;
        setStatus(p.followers);
        if (!isLab) tryBtn.disabled = false;
        if (branched) send("room_branch", isLab ? undefined : { page: location.pathname }); // a reconnect while trying it ourselves: stay branched
        return;
      case "room_page":
        lastPage = p;
        if (branched || goTo(p.page)) return;
        if (!isLab) { lab.show(p.state || {}); document.body.dataset.roomSynced = "1"; shareLink(); }
        return;
      case "started": case "event": case "events": case "detail": case "resumed":
        if (!isLab) return;
        if (!branched) lab.deliver(msg);
        if (msg.type === "resumed") document.body.dataset.roomSynced = "1";
        return;
      case "room_log":
        if (!isLab) return;
        lastLog = p;
        tryBtn.disabled = !p.start;
        if (!branched && p.start) { lab.setForm(p.start); shareLink(); }
        return;
      case "room_counts":
        setStatus(p.followers);
        return;
      case "room_class":
        if (!branched) mineReq = studentRequest(mineBox, msg, code);
        return;
      case "room_class_result":
        if (mineReq) mineReq.result(msg);
        return;
      case "room_poll":
        if (!poll || poll.id !== p.id) mine = -1;
        poll = p;
        // a lesson's choice question whose choices the (covered) panel
        // computes gets them from the class's question
        if (!isLab && poll.open && poll.options) document.querySelectorAll("form.question").forEach((f) => {
          if (f.dataset.ask === poll.question && f.dataset.optionsLive) f.closest(".lesson-section").dispatchEvent(new CustomEvent("inferscope:live", { detail: { key: f.dataset.optionsLive, value: poll.options } }));
        });
        drawPoll(pollBox, poll, vote, false, mine, voteAnswer, answerHere());
        return;
      case "room_recall":
        if (branched) back();
        return;
      case "room_branch": {
        // again: a reconnect while trying it ourselves; the page keeps its own run
        const again = branched;
        branched = true;
        document.body.dataset.room = "branched";
        tryBtn.hidden = true;
        backBtn.hidden = false;
        status.textContent = isLab ? "Trying it yourself: this is your own run, started at the presenter's step. Press “Back to the class” to follow again." :
          "Trying it yourself: what you run now is your own (it counts as your session). Press “Back to the class” to follow again.";
        if (!again) {
          if (isLab) lab.branch(p.start, p.log);
          else lab.setFollowing(false);
        }
        shareLink();
        return;
      }
      case "room_closed": case "closing":
        ended = msg.type === "room_closed";
        status.textContent = (ended ? "The class has ended: " : "") + (p.reason || "") + (ended ? ". What you see stays; open the lab for a run of your own." : "");
        document.body.dataset.room = ended ? "ended" : document.body.dataset.room;
        tryBtn.disabled = true;
        return;
      case "error":
        if (["room_not_found", "room_closed", "room_full", "rate_limited", "removed", "too_many_tabs"].includes(p.code)) {
          ended = true;
          status.textContent = C.errorText(p);
          status.classList.add("error");
          document.body.dataset.room = "refused";
          return;
        }
        lab.setStatus(C.errorText(p), true);
    }
  }
  function setStatus(n) {
    if (branched || ended) return;
    status.textContent = "Following class " + code + " live" + (n ? " with " + n + (n === 1 ? " student" : " students") : "") + ".";
  }
  function vote(i) {
    mine = i;
    send("room_vote", { poll: poll.id, option: i });
    drawPoll(pollBox, poll, vote, false, mine, voteAnswer, answerHere());
  }
  function voteAnswer(text) {
    mine = text;
    send("room_vote", { poll: poll.id, answer: text });
    drawPoll(pollBox, poll, vote, false, mine, voteAnswer, answerHere());
  }
  // answerHere: a lesson shows the asked question as a form of its own
  // (lessonframe.js), which answers through ISClassHook
  const answerHere = () => !!(poll && !isLab && [...document.querySelectorAll("form.question")].some((f) => f.dataset.ask === poll.question));
  window.ISClassHook = {
    following: () => !branched && !ended,
    answer(q, given) {
      if (branched || ended || !poll || !poll.open || poll.question !== q.ask) return false;
      if ((poll.kind || "choice") === "choice") {
        const i = poll.options.indexOf(given);
        if (i < 0) return false;
        vote(i);
      } else voteAnswer(given);
      return true;
    },
  };
  function back() {
    branched = false;
    document.body.dataset.room = "following";
    tryBtn.hidden = false;
    backBtn.hidden = true;
    lab.setFollowing(true);
    if (lastPage && goTo(lastPage.page)) return;
    send("room_follow");
    setStatus();
  }
  tryBtn.addEventListener("click", () => send("room_branch", isLab ? undefined : { page: location.pathname }));
  backBtn.addEventListener("click", back);
  connect();
  return { following: true, changed() {}, claim: () => false, onMessage: () => false, onError() {} };
}

// ---------- lesson panels, mirrored ----------
// A lesson's live panels run on the presenter's page only (followers cost
// no engine work); what each panel drew travels in the room's page state
// as a plain tree: ["tag", {attrs}, [children]] or a string. Followers
// rebuild it from allowlisted tags and attributes only (no scripts, no
// event handlers, no links); a canvas travels as a PNG image.
const TAGS = new Set(["div", "span", "p", "b", "i", "em", "strong", "small", "code", "table", "thead", "tbody", "tr", "td", "th", "ol", "ul", "li", "br",
  "figure", "figcaption", "h3", "h4", "img", "svg", "g", "rect", "line", "path", "text", "tspan", "title", "polyline", "polygon", "circle",
  "label", "output", "input", "dl", "dt", "dd", "sub", "sup", "caption", "defs", "marker", "ellipse"]);
const ATTRS = new Set(["class", "title", "role", "aria-label", "colspan", "rowspan", "scope", "width", "height", "viewBox", "x", "y", "x1", "x2", "y1", "y2",
  "cx", "cy", "r", "d", "points", "transform", "fill", "stroke", "stroke-width", "stroke-dasharray", "opacity", "text-anchor", "dominant-baseline", "font-size", "style", "alt",
  "type", "min", "max", "step", "value", "checked", "rx", "ry", "marker-end", "refX", "refY", "markerWidth", "markerHeight", "orient"]);
const SVG_NS = "http://www.w3.org/2000/svg";
const MAX_STATE = 50000; // characters of page state (the server allows 56 KiB)

function attrOK(tag, k, v) {
  if (k.startsWith("data-")) return /^data-[a-z0-9-]+$/.test(k);
  if (k === "style") return !/url\(|expression|@import|\\/i.test(v);
  if (k === "src") return tag === "img" && /^data:image\/png;base64,[A-Za-z0-9+/=]+$/.test(v);
  return ATTRS.has(k);
}

export function snapshotDOM(node) {
  if (node.nodeType === 3) return node.nodeValue;
  if (node.nodeType !== 1 || node.hasAttribute("data-no-mirror")) return ""; // the presenter's own controls
  const tag = node.localName;
  const attrs = {};
  if (tag === "canvas") {
    try { attrs.src = node.toDataURL("image/png"); } catch (e) { return ""; }
    for (const k of ["class", "width", "height", "role"]) if (node.hasAttribute(k)) attrs[k] = node.getAttribute(k);
    attrs.alt = node.getAttribute("aria-label") || "";
    return ["img", attrs, []];
  }
  // another element (a token chip that is a button, say) keeps its
  // classes and children as a span, so it looks the same
  if (!TAGS.has(tag)) {
    if (node.hasAttribute("class")) attrs.class = node.getAttribute("class");
    return ["span", attrs, [...node.childNodes].map(snapshotDOM)];
  }
  for (const a of node.attributes) if (attrOK(tag, a.name, a.value)) attrs[a.name] = a.value;
  // a control shows where the presenter set it (value is a property)
  if (tag === "input") {
    if (!/^(range|checkbox|radio|number|text)$/.test(node.type)) return ["span", {}, []];
    attrs.type = node.type;
    attrs.value = String(node.value);
    if (node.checked) attrs.checked = "";
  }
  return [tag, attrs, [...node.childNodes].map(snapshotDOM)];
}

export function buildDOM(t, svg) {
  if (typeof t === "string") return document.createTextNode(t);
  if (!Array.isArray(t) || typeof t[0] !== "string" || !TAGS.has(t[0])) return document.createTextNode("");
  const tag = t[0], inSvg = svg || tag === "svg";
  const e = inSvg ? document.createElementNS(SVG_NS, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(t[1] || {})) if (typeof v === "string" && attrOK(tag, k, v)) e.setAttribute(k, v);
  if (tag === "input") { e.disabled = true; e.tabIndex = -1; e.setAttribute("aria-disabled", "true"); if (!e.getAttribute("aria-label")) e.setAttribute("aria-label", "the presenter's setting"); }
  // a table's scroll box stays reachable by keyboard
  if (tag === "div" && e.classList.contains("table-wrap")) { e.tabIndex = 0; e.setAttribute("role", "region"); if (!e.getAttribute("aria-label")) e.setAttribute("aria-label", "table"); }
  for (const c of t[2] || []) e.appendChild(buildDOM(c, inSvg));
  return e;
}

// panelTrees: what the section's panels show now, within the state's size
// limit (the largest panels are left out first: students then see a note).
export function panelTrees(section) {
  const outs = [...section.querySelectorAll(".lesson-panel")].map((div) => {
    const out = div.querySelector(".panel-out");
    if (!out || out.dataset.state !== "done") return null;
    return { tree: snapshotDOM(out), prompt: (div.querySelector(".panel-prompt") || {}).value || "" };
  });
  const size = (x) => (x ? JSON.stringify(x).length : 0);
  while (size(outs) > MAX_STATE) {
    let big = -1;
    outs.forEach((o, i) => { if (o && !o.omitted && (big < 0 || size(o) > size(outs[big]))) big = i; });
    if (big < 0) break;
    outs[big] = { omitted: true };
  }
  return outs;
}

// liveValues: the numbers the section's text shows from its panels (data-live).
export function liveValues(section) {
  const v = {};
  section.querySelectorAll("[data-live]").forEach((e) => { v[e.dataset.live] = e.textContent; });
  return v;
}

// mirrorPanels draws the presenter's panels (and the numbers the text
// shows from them) into the section.
export function mirrorPanels(section, panels, live, covered) {
  // panels may draw the model view (modelview.css), loaded by the panel's
  // own module on the presenter's page
  if (!document.querySelector('link[href="/static/css/modelview.css"]')) document.head.appendChild(C.el("link", { rel: "stylesheet", href: "/static/css/modelview.css" }));
  for (const [k, text] of Object.entries(live || {})) {
    section.querySelectorAll("[data-live]").forEach((e) => { if (e.dataset.live === k && (typeof text === "string" || typeof text === "number")) e.textContent = String(text); });
    // the section's question forms check a student's answer against it
    section.dispatchEvent(new CustomEvent("lesson-live", { bubbles: true, detail: { key: k, value: text } }));
  }
  section.querySelectorAll(".lesson-panel").forEach((div, i) => {
    let out = div.querySelector(".panel-out");
    if (!out) {
      out = C.el("div", { class: "panel-out", "data-testid": "panel-out", "data-mirror": "1" });
      div.appendChild(out);
    }
    const p = (panels || [])[i];
    C.clear(out);
    if (covered) { out.dataset.state = "covered"; out.appendChild(C.el("p", { class: "muted small", "data-testid": "mirror-covered", text: "Covered until the class has answered: make your prediction above; the presenter reveals the panel." })); return; }
    if (!p) { out.dataset.state = "waiting"; out.appendChild(C.el("p", { class: "muted small", text: "The presenter's panel is still running…" })); return; }
    if (p.omitted) { out.dataset.state = "omitted"; out.appendChild(C.el("p", { class: "muted small", text: "This panel is too large to show here: press “Try it myself” to run it on your own." })); return; }
    if (p.prompt) out.appendChild(C.el("p", { class: "small muted", "data-testid": "mirror-prompt", text: "Presenter's prompt: " + p.prompt }));
    const root = buildDOM(p.tree); // the presenter's .panel-out: its children go into ours
    out.append(...root.childNodes);
    out.dataset.state = "mirror";
  });
}
