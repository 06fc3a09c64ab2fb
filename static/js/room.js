// room.js: the classroom in the lab. A presenter opens a room ("Present to
// a class") and gets a join code, link and QR code; students who join
// (/join → /lab?room=CODE) follow the presenter's run live through their own
// follower socket, which can only vote, branch ("Try it myself") and come
// back ("Back to the class"). The lab (lab.js) hands this module a few
// hooks; the room messages are described in web/roomproto.go.
import * as C from "./core.js";

const KEY = "inferscope-room"; // sessionStorage: only the presenter's own tab holds the key
const $ = C.$;

export function initRoom(lab) {
  const code = new URLSearchParams(location.search).get("room");
  const bar = C.el("section", { id: "room-bar", class: "card room-bar", "data-testid": "room-bar", "aria-label": "Class" });
  const css = C.el("link", { rel: "stylesheet", href: "/static/css/room.css" });
  document.head.appendChild(css);
  const host = document.querySelector(".lab") || $("main");
  host.insertBefore(bar, host.firstChild);
  return code ? follower(lab, bar, code.toUpperCase()) : presenter(lab, bar);
}

// ---------- presenter ----------
function presenter(lab, bar) {
  let room = null;
  try { room = JSON.parse(sessionStorage.getItem(KEY) || "null"); } catch (e) { room = null; }
  let claimed = false;
  const btn = C.el("button", { type: "button", id: "btn-present", "data-testid": "btn-present", text: "Present to a class" });
  const buttons = document.querySelector("#controls .buttons");
  if (buttons) buttons.appendChild(btn);
  bar.hidden = true;
  btn.addEventListener("click", () => {
    if (room) return;
    lab.client.connect().then(() => {
      const cur = lab.current();
      const p = { page: location.pathname };
      if (cur.start) { p.start = cur.start; p.log = cur.log; }
      lab.client.send("room_open", p);
    }).catch(() => lab.setStatus("Cannot reach the server.", true));
  });
  const send = (type, extra) => room && lab.client.send(type, Object.assign({ code: room.code, key: room.key }, extra || {}));

  function draw(counts) {
    bar.hidden = !room;
    btn.hidden = !!room;
    if (!room) return;
    if (!bar.firstChild) {
      const link = location.origin + "/join?code=" + room.code;
      bar.append(
        C.el("div", { class: "room-join" }, [
          C.el("img", { src: "/join/qr.svg?code=" + room.code, alt: "QR code of the join link " + link, width: "132", height: "132", "data-testid": "room-qr", class: "room-qr" }),
          C.el("div", {}, [
            C.el("p", { class: "room-title" }, ["Class code ", C.el("b", { class: "room-code mono", "data-testid": "room-code", text: room.code })]),
            C.el("p", { class: "small" }, ["Students open ", C.el("a", { href: link, "data-testid": "room-join-url", text: link }), " or go to /join and type the code."]),
            /^(localhost|127\.|\[::1\])/.test(location.host) ? C.el("p", { class: "small muted", text: "This page uses a local address: students need this computer's network address instead (serve --addr and --allow-host)." }) : null,
            C.el("p", { class: "small", id: "room-counts", "data-testid": "room-counts", role: "status", text: "Nobody has joined yet." }),
          ]),
        ]),
        C.el("div", { class: "room-tools" }, [
          C.el("button", { type: "button", id: "btn-poll", "data-testid": "btn-poll", text: "Ask: which token comes next?" }),
          C.el("button", { type: "button", id: "btn-reveal", "data-testid": "btn-reveal", text: "Reveal the answers", disabled: true }),
          C.el("button", { type: "button", id: "btn-recall", "data-testid": "btn-recall", text: "Bring everyone back" }),
          C.el("button", { type: "button", id: "btn-close-room", "data-testid": "btn-close-room", text: "End the class" }),
        ]),
        C.el("div", { id: "room-poll", class: "room-poll", "data-testid": "room-poll" }));
      $("btn-poll").addEventListener("click", ask);
      $("btn-reveal").addEventListener("click", () => send("room_reveal"));
      $("btn-recall").addEventListener("click", () => send("room_recall"));
      $("btn-close-room").addEventListener("click", () => send("room_close"));
    }
    if (counts) {
      const t = counts.followers + (counts.followers === 1 ? " student follows" : " students follow") +
        (counts.branched ? " · " + counts.branched + " trying it themselves" : "");
      $("room-counts").textContent = t;
      $("room-counts").dataset.followers = counts.followers;
      $("room-counts").dataset.branched = counts.branched;
      if (counts.poll) drawPoll($("room-poll"), counts.poll, null, true);
      $("btn-reveal").disabled = !(counts.poll && counts.poll.open);
    }
  }
  function ask() {
    const top = (lab.top() || []).slice(0, 4);
    if (top.length < 2) { lab.setStatus("Step to the logits first: the question offers the model's top candidates.", true); return; }
    send("room_poll", { question: "Which token will the model choose next?", options: top.map((t) => C.tokenLabel(t)) });
  }
  function forget(reason) {
    room = null;
    claimed = false;
    sessionStorage.removeItem(KEY);
    bar.replaceChildren();
    draw();
    if (reason) lab.setStatus("The class has ended: " + reason, false);
  }
  draw();
  return {
    following: false,
    // claim: after (re)connecting, a presenter takes its room back with the key
    claim() {
      if (!room) return false;
      lab.client.send("room_claim", { code: room.code, key: room.key });
      return true;
    },
    onMessage(msg) {
      const p = msg.payload || {};
      switch (msg.type) {
        case "room_opened":
          room = { code: p.code, key: p.key };
          sessionStorage.setItem(KEY, JSON.stringify(room));
          lab.adopt(p.start, p.log || []);
          claimed = true;
          draw();
          lab.setStatus("Presenting class " + p.code + ": every step you take appears on your students' screens.");
          return true;
        case "room_counts":
          draw(p);
          return true;
        case "room_closed":
          forget(p.reason);
          return true;
      }
      return false;
    },
    onError(p) {
      if (room && ["room_not_found", "room_closed", "bad_key"].includes(p.code)) { forget(""); lab.adopt(null, []); }
    },
  };
}

// drawPoll shows a poll: the options as buttons (students, while open) or
// bars with counts (the presenter, and everyone after the reveal).
function drawPoll(box, poll, onVote, presenter, mine) {
  C.clear(box);
  if (!poll) return;
  box.dataset.poll = poll.id;
  box.dataset.open = poll.open ? "1" : "0";
  box.appendChild(C.el("p", { class: "room-question", "data-testid": "poll-question", text: poll.question }));
  const total = poll.votes || 0;
  const list = C.el("ul", { class: "room-options" });
  poll.options.forEach((o, i) => {
    const n = poll.counts ? poll.counts[i] || 0 : null;
    const label = o + (n !== null ? " — " + n + (n === 1 ? " student" : " students") : "");
    let item;
    if (onVote && poll.open) {
      item = C.el("button", { type: "button", class: "poll-option" + (mine === i ? " chosen" : ""), "data-testid": "poll-option", "data-option": i, "aria-pressed": mine === i ? "true" : "false", text: o });
      item.addEventListener("click", () => onVote(i));
    } else {
      item = C.el("span", { class: "poll-result" + (mine === i ? " chosen" : ""), "data-testid": "poll-result", "data-option": i, "data-count": n === null ? "" : n });
      const fill = C.el("span", { class: "poll-fill" });
      fill.style.width = (total ? 100 * (n || 0) / total : 0) + "%";
      item.append(fill, C.el("span", { class: "poll-label mono", text: label }));
    }
    list.appendChild(C.el("li", {}, [item]));
  });
  box.appendChild(list);
  box.appendChild(C.el("p", { class: "small muted", text: poll.open ? (presenter ? total + " answered so far. Reveal, then step to see the model's choice." : "Pick your guess; the presenter reveals the answers.") :
    total + " answered. The model's own choice appears when the presenter steps to the sample stage." }));
}

// ---------- follower ----------
function follower(lab, bar, code) {
  let ws = null, branched = false, ended = false, retries = 0, lastLog = null, poll = null, mine = -1, nextID = 1;
  const status = C.el("p", { id: "room-status", class: "room-title", "data-testid": "room-status", role: "status", text: "Joining class " + code + "…" });
  const tryBtn = C.el("button", { type: "button", id: "btn-try", "data-testid": "btn-try", class: "primary", text: "Try it myself", disabled: true });
  const backBtn = C.el("button", { type: "button", id: "btn-back", "data-testid": "btn-back", text: "Back to the class", hidden: true });
  const pollBox = C.el("div", { id: "room-poll", class: "room-poll", "data-testid": "room-poll" });
  bar.append(C.el("div", { class: "room-join" }, [status]), C.el("div", { class: "room-tools" }, [tryBtn, backBtn]),
    C.el("p", { class: "small muted", text: "Following shows the presenter's run; “Try it myself” gives you a private copy at the same step, to force other tokens or change settings." }), pollBox);
  document.body.dataset.room = "following";
  lab.setFollowing(true);

  const send = (type, payload) => {
    if (!ws || ws.readyState !== 1) return;
    const m = { type, id: nextID++ };
    if (payload !== undefined) m.payload = payload;
    ws.send(JSON.stringify(m));
  };
  function connect() {
    ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws/room?code=" + encodeURIComponent(code));
    const me = ws;
    ws.onmessage = (e) => { let m; try { m = JSON.parse(e.data); } catch (err) { return; } onMessage(m); };
    ws.onclose = () => {
      if (me !== ws || ended) return;
      status.textContent = "Connection to the class lost; reconnecting…";
      setTimeout(connect, Math.min(5000, 250 * Math.pow(2, retries++)));
    };
  }
  function onMessage(msg) {
    const p = msg.payload || {};
    switch (msg.type) {
      case "room_joined":
        retries = 0;
        setStatus(p.followers);
        if (branched) send("room_branch"); // a reconnect while trying it ourselves: stay branched
        return;
      case "started": case "event": case "resumed":
        if (!branched) lab.deliver(msg);
        if (msg.type === "resumed") document.body.dataset.roomSynced = "1";
        return;
      case "room_log":
        lastLog = p;
        tryBtn.disabled = !p.start;
        if (!branched && p.start) lab.setForm(p.start);
        return;
      case "room_counts":
        setStatus(p.followers);
        return;
      case "room_poll":
        if (!poll || poll.id !== p.id) mine = -1;
        poll = p;
        drawPoll(pollBox, poll, vote, false, mine);
        return;
      case "room_recall":
        if (branched) back();
        return;
      case "room_branch":
        branched = true;
        document.body.dataset.room = "branched";
        tryBtn.hidden = true;
        backBtn.hidden = false;
        status.textContent = "Trying it yourself: this is your own run, started at the presenter's step. Press “Back to the class” to follow again.";
        lab.branch(p.start, p.log);
        return;
      case "room_closed": case "closing":
        ended = msg.type === "room_closed";
        status.textContent = (ended ? "The class has ended: " : "") + (p.reason || "") + (ended ? ". What you see stays; open the lab for a run of your own." : "");
        document.body.dataset.room = ended ? "ended" : document.body.dataset.room;
        tryBtn.disabled = true;
        return;
      case "error":
        if (["room_not_found", "room_closed", "room_full", "rate_limited"].includes(p.code)) {
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
    drawPoll(pollBox, poll, vote, false, mine);
  }
  function back() {
    branched = false;
    document.body.dataset.room = "following";
    tryBtn.hidden = false;
    backBtn.hidden = true;
    lab.setFollowing(true);
    send("room_follow");
    setStatus();
  }
  tryBtn.addEventListener("click", () => send("room_branch"));
  backBtn.addEventListener("click", back);
  connect();
  return { following: true, claim: () => false, onMessage: () => false, onError() {} };
}
