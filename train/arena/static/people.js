// The arena's page for a person (GET /play): ask for a seat, then play over the protocol of docs/protocol.md on
// /bot, as a remote bot does, with `words: true` for the labels of the legal moves. The drawing is the browser
// table's: train/serve/static/table.js, loaded after this script, gives el, card, showMessage, api, renderBoard and
// renderResult. This script's DOMContentLoaded listener runs first and stops that page's own setup (its elements
// are not on this page). Everything here sits inside one function, so that no name clashes with table.js's.
"use strict";

(() => {
  const byId = (id) => document.getElementById(id);
  const state = { socket: null, labels: [], seat: 0, turn: null, over: false, name: "" };

  function say(text) { byId("status").textContent = text; }

  function send(message) {
    if (state.socket && state.socket.readyState === WebSocket.OPEN) state.socket.send(JSON.stringify(message));
  }

  function choose(turn, action) {
    if (state.turn !== turn) return;
    state.turn = null;
    send({ type: "action", turn, action });
    byId("actions").replaceChildren(el("span", { class: "quiet" }, "The others are playing\u2026"));
    renderHandOnly(state.lastView.hand);
  }

  function renderHandOnly(hand) { byId("hand").replaceChildren(...hand.map((c) => card(c))); }

  function renderTurn(m) {
    const view = { ...m.view, totals: m.view.chips };
    state.lastView = view;
    state.turn = m.turn;
    byId("table").hidden = false;
    byId("result").hidden = true;
    byId("table").dataset.turn = String(m.turn);
    renderBoard(byId("board"), view, state.labels);
    const byCard = {};
    for (const a of m.legal) if (a.card !== undefined) byCard[a.card] = a;
    byId("hand").replaceChildren(...view.hand.map((c) => (byCard[c] === undefined ? card(c) : card(c, "button", {
      type: "button", class: "playable", title: byCard[c].label || byCard[c].text,
      data: { action: String(byCard[c].action) }, onclick: () => choose(m.turn, byCard[c].action),
    }))));
    const buttons = m.legal.filter((a) => a.card === undefined).map((a) => el("button", {
      type: "button", class: "action", data: { action: String(a.action) }, onclick: () => choose(m.turn, a.action),
    }, a.label || a.text));
    byId("actions").replaceChildren(...buttons);
    byId("words").textContent = m.text || "";
    say(`Your move: ${Math.round(m.clock_ms / 1000)} s, then the fallback plays it for you.`);
  }

  function renderMatchEnd(m) {
    const rows = [el("tr", {}, ...["entry", "chips per deal", "table advantage"].map((h) => el("th", {}, h)))];
    for (const r of m.results) {
      const you = r.seat === `bot:person:${state.name}`;
      rows.push(el("tr", { class: you ? "mine" : "" }, el("td", {}, you ? `${state.name} (you)` : r.seat),
        el("td", {}, r.chips.toFixed(2)), el("td", {}, r.advantage.toFixed(2))));
    }
    byId("match-table").replaceChildren(...rows);
    byId("match-end").hidden = false;
    byId("hand-area").hidden = true;
    say(`The match is ${m.status}.`);
  }

  function onMessage(m) {
    if (m.type === "welcome") say("Seated: the match starts\u2026");
    else if (m.type === "match_start") say(`Match ${m.match}: ${m.deals} deal(s), each played once, the seats turning one place a deal.`);
    else if (m.type === "deal_start") {
      state.seat = m.seat;
      state.labels = m.seats.map((s, q) => (q === m.seat ? "human" : s));
      byId("table").dataset.game = `${m.deal}:${m.rotation}`;
      byId("hand-area").hidden = false;
      say(`Deal ${m.deal + 1} of the match: you are player_${m.seat}.`);
    } else if (m.type === "turn") renderTurn(m);
    else if (m.type === "deal_end") {
      state.turn = null;
      byId("actions").replaceChildren();
      renderResult(byId("result-table"), { players: m.results.hands.length, totals: null }, m.results, state.labels);
      byId("result").hidden = false;
    } else if (m.type === "match_end") {
      state.over = true;
      renderMatchEnd(m);
      state.socket.close();
    } else if (m.type === "error") showMessage(m.message);
  }

  async function join(event) {
    event.preventDefault();
    showMessage("");
    const opponents = byId("opponents").value.split(",").map((s) => s.trim()).filter((s) => s);
    try {
      const seat = await api("POST", "/api/people/seats", {
        name: byId("name").value.trim(), opponents, deals: Number(byId("deals").value),
      });
      state.name = seat.name;
      byId("join").hidden = true;
      const scheme = location.protocol === "https:" ? "wss:" : "ws:";
      const socket = new WebSocket(`${scheme}//${location.host}/bot`);
      state.socket = socket;
      socket.addEventListener("open", () => send({ type: "hello", protocol: 1, name: seat.name, token: seat.token, words: true }));
      socket.addEventListener("message", (e) => onMessage(JSON.parse(e.data)));
      socket.addEventListener("close", () => { if (!state.over) say("The connection closed."); });
    } catch (err) {
      showMessage(err.message);
    }
  }

  async function setUpPage() {
    byId("join").addEventListener("submit", join);
    try {
      // refused (403) where the operator did not start the server with --people: the message says so
      const options = await api("GET", "/api/people/options");
      // an operator's agent is named by its handle (offered:K), shown with the agent it is, never its options
      const label = (a) => (options.offered && options.offered[a] ? `${a} (${options.offered[a]})` : a);
      byId("opponent-specs").replaceChildren(...[...options.bots, ...options.agents].map((a) => el("option", { value: a, label: label(a) })));
      byId("deals").max = String(options.max_deals);
      byId("deals").title = `at most ${options.max_games} seat-games: deals x players (you and the others)`;
    } catch (err) {
      showMessage(err.message);
      byId("join-button").disabled = true;
    }
  }

  document.addEventListener("DOMContentLoaded", (event) => {
    event.stopImmediatePropagation(); // table.js's own setup is for the page of bourre serve
    setUpPage();
  });
})();
