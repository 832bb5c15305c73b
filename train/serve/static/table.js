// The page of `bourre serve`: a table played through the server's JSON API, and the replay view.
// The server keeps the game; this script only draws the view it receives and sends the chosen action.
"use strict";

const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
const $ = (id) => document.getElementById(id);

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "class") node.className = value;
    else if (key === "data") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node[key] = value;
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

function card(text, tag = "span", props = {}) {
  const suit = text.slice(-1);
  const { class: extra, data, ...rest } = props;
  const red = suit === "D" || suit === "H" ? " red" : "";
  return el(tag, { class: `card${red}${extra ? " " + extra : ""}`, data: { card: text, ...data }, title: text, ...rest },
    text.slice(0, -1), el("span", { class: "suit" }, SUITS[suit]));
}

function showMessage(text) {
  const box = $("message");
  box.textContent = text || "";
  box.hidden = !text;
}

async function api(method, path, body, raw = false) {
  // the server takes only JSON posts (a page elsewhere cannot send JSON to it without asking)
  const init = { method, headers: method === "POST" ? { "Content-Type": "application/json" } : {} };
  if (body !== undefined) init.body = raw ? body : JSON.stringify(body);
  const response = await fetch(path, init);
  const text = await response.text();
  let payload = null;
  try { payload = text ? JSON.parse(text) : null; } catch (err) { payload = { error: text }; }
  if (!response.ok) {
    const error = new Error(payload && payload.error ? payload.error : `HTTP ${response.status}`);
    error.status = response.status;
    throw error;
  }
  return payload;
}

// ------------------------------------------------------------------ the board, shared by play and replay
function seatName(view, agents, q) {
  if (agents && agents[q] === "human" && q === view.seat) return `player_${q} (you)`;
  return agents && agents[q] ? `player_${q} (${agents[q]})` : `player_${q}`;
}

function renderBoard(target, view, agents) {
  const current = view.tricks.length ? view.tricks[view.tricks.length - 1] : null;
  const onTable = {};
  if (current && current.winner === null) for (const c of current.cards) onTable[c.seat] = c.card;

  const info = el("div", { class: "info" },
    el("span", { class: "phase" }, view.phase),
    el("span", {}, "Trump: ", view.trump ? el("b", {}, view.trump) : "to be named"),
    view.turned ? el("span", {}, "Turned: ", card(view.turned.card), ` ${view.turned.status}`) : null,
    el("span", { class: "pot" }, `Pot: ${view.pot}`),
    view.cinch ? el("span", { class: "badge" }, "you have a cinch") : null);

  const seats = el("div", { class: "seats" });
  for (const s of view.seats) {
    const q = s.seat;
    const drew = s.discards === null ? "" : s.discards === 0 ? "stood pat" : `drew ${s.discards}`;
    const box = el("div", {
      class: `seat${q === view.to_act ? " to-act" : ""}${q === view.seat ? " mine" : ""} ${s.decision}`,
      data: { seat: String(q) },
    },
    el("div", { class: "name" }, seatName(view, agents, q), q === view.dealer ? el("span", { class: "dealer", title: "dealer" }, "D") : null),
    el("div", {}, s.decision + (s.stayed ? ", stayed" : "") + (drew ? `, ${drew}` : "")),
    el("div", {}, `tricks: ${s.tricks}`),
    view.totals ? el("div", { class: "chips" }, `chips: ${view.totals[q] > 0 ? "+" : ""}${view.totals[q]}`) : null,
    onTable[q] ? el("div", { class: "played" }, card(onTable[q])) : null,
    view.hands ? el("div", { class: "cards small" }, ...view.hands[q].map((c) => card(c))) : null);
    seats.append(box);
  }

  const tricks = el("ul", { class: "tricks" });
  for (const t of view.tricks) {
    tricks.append(el("li", {},
      `trick ${t.number}: `, ...t.cards.map((c) => el("span", { class: "play" }, `p${c.seat} `, card(c.card))),
      t.cards.length ? null : el("span", { class: "quiet" }, `player_${t.leader} to lead`),
      t.winner === null ? null : el("span", { class: "winner" }, ` \u2192 player_${t.winner}`)));
  }
  target.replaceChildren(info, seats, view.tricks.length ? tricks : el("p", { class: "quiet" }, "No trick led yet."));
}

function renderLog(target, view, agents) {
  target.replaceChildren(...view.log.map((e) => el("li", {}, `${seatName(view, agents, e.seat)}: ${e.text}`)));
}

function renderResult(target, view, result, agents) {
  const rows = [el("tr", {}, ...["seat", "hand", "", "tricks", "chips", "total"].map((h) => el("th", {}, h)))];
  for (let q = 0; q < view.players; q++) {
    const outcome = result.outcomes[q].length ? ` (${result.outcomes[q].join(", ")})` : "";
    const pay = result.payments[q];
    rows.push(el("tr", { data: { seat: String(q) } },
      el("td", {}, seatName(view, agents, q)),
      el("td", { class: "cards small" }, ...result.hands[q].map((c) => card(c))),
      el("td", {}, result.decisions[q] + outcome),
      el("td", {}, String(result.tricks[q])),
      el("td", { class: pay > 0 ? "gain" : pay < 0 ? "loss" : "" }, `${pay > 0 ? "+" : ""}${pay}`),
      el("td", {}, view.totals ? `${view.totals[q] > 0 ? "+" : ""}${view.totals[q]}` : "")));
  }
  target.replaceChildren(...rows);
}

// ------------------------------------------------------------------ playing
const play = { view: null, selected: new Set() };

function renderHand(view) {
  const hand = $("hand");
  const actions = $("actions");
  const mine = view.to_act === view.seat && !view.over;
  const byCard = {};
  const stays = view.legal.filter((a) => a.discard !== undefined);
  for (const a of view.legal) if (a.card !== undefined) byCard[a.card] = a.action;
  hand.replaceChildren();
  actions.replaceChildren();
  for (const c of view.hand) {
    if (mine && stays.length) {
      const chosen = play.selected.has(c);
      hand.append(card(c, "button", {
        type: "button", class: `selectable${chosen ? " chosen" : ""}`, title: chosen ? `keep ${c}` : `discard ${c}`,
        onclick: () => { chosen ? play.selected.delete(c) : play.selected.add(c); renderHand(view); },
      }));
    } else if (mine && byCard[c] !== undefined) {
      hand.append(card(c, "button", {
        type: "button", class: "playable", data: { action: String(byCard[c]) }, onclick: () => act(byCard[c]),
      }));
    } else {
      hand.append(card(c));
    }
  }
  if (!mine) {
    if (!view.over) actions.append(el("span", { class: "quiet" }, "The others are playing\u2026"));
    return;
  }
  if (stays.length) {
    const wanted = [...play.selected].sort().join(" ");
    const match = stays.find((a) => [...a.discard].sort().join(" ") === wanted);
    actions.append(el("button", {
      type: "button", id: "discard-button", class: "action", disabled: !match,
      data: match ? { action: String(match.action) } : {},
      onclick: () => match && act(match.action),
    }, match ? match.text : `discarding ${play.selected.size} is not allowed`));
  }
  for (const a of view.legal) {
    if (a.card !== undefined || a.discard !== undefined) continue;
    actions.append(el("button", { type: "button", class: "action", data: { action: String(a.action) },
      onclick: () => act(a.action) }, a.text));
  }
  if (stays.length) actions.append(el("span", { class: "quiet" }, " Select the cards to discard, then play."));
}

function renderTable(view) {
  play.view = view;
  $("table").hidden = false;
  // an agent that missed its clock: the heuristic plays its seat, and the page says so
  $("notices").textContent = view.notices.join(" ");
  $("notices").hidden = !view.notices.length;
  $("table").dataset.turn = `${view.deal}:${view.turn}`;
  $("table").dataset.over = view.over ? "1" : "0";
  renderBoard($("board"), view, view.agents);
  renderHand(view);
  $("hand-area").hidden = view.over;
  renderLog($("log"), view, view.agents);
  $("result").hidden = !view.over;
  if (view.over) {
    renderResult($("result-table"), view, view.result, view.agents);
    $("result-pot").textContent = `Pot carried to the next deal: ${view.result.pot}` +
      (view.result.rake ? `; the house kept ${view.result.rake}` : "");
    $("history-link").href = view.result.history;
    $("history-link").download = `bourre-deal-${view.deal}.json`;
  }
}

// An agent that failed (502) closed its table: back to the setup, with the server's message naming the agent.
function leaveIfClosed(err) {
  if (err.status !== 502) return;
  $("table").hidden = true;
  $("setup").hidden = false;
}

async function act(action) {
  showMessage("");
  try {
    play.selected.clear();
    renderTable(await api("POST", `/api/tables/${play.view.table}/actions`, { action, turn: play.view.turn }));
  } catch (err) {
    showMessage(err.message);
    leaveIfClosed(err);
  }
}

function fillSeats() {
  const n = Number($("players").value);
  const seat = Math.min(Number($("seat").value || 0), n - 1);
  $("seat").replaceChildren(...Array.from({ length: n }, (_, q) => el("option", { value: String(q) }, `player_${q}`)));
  $("seat").value = String(seat);
  const previous = [...$("agents").querySelectorAll("input")].map((i) => i.value);
  const inputs = [];
  for (let q = 0; q < n; q++) {
    if (q === seat) continue;
    inputs.push(el("label", {}, `player_${q} `, el("input", {
      type: "text", value: previous[inputs.length] || play.defaultAgent, required: true,
      data: { seat: String(q) },
    })));
    inputs[inputs.length - 1].querySelector("input").setAttribute("list", "agent-specs");
  }
  $("agents").replaceChildren(el("legend", {}, "Agents at the other seats (one the server offers, or a search with its budget)"), ...inputs);
}

async function setUp() {
  const options = await api("GET", "/api/options");
  play.defaultAgent = options.default_agent;
  $("preset").replaceChildren(...options.presets.map((p) => el("option", { value: p }, p.replaceAll("_", " "))));
  $("players").replaceChildren(...options.players.map((n) => el("option", { value: String(n) }, String(n))));
  $("players").value = "5";
  $("agent-specs").replaceChildren(...options.agents.map((a) => el("option", { value: a })));
  fillSeats();
  $("players").addEventListener("change", fillSeats);
  $("seat").addEventListener("change", fillSeats);
  $("setup").addEventListener("submit", async (event) => {
    event.preventDefault();
    showMessage("");
    const agents = [...$("agents").querySelectorAll("input")].map((i) => i.value.trim());
    try {
      const view = await api("POST", "/api/tables", {
        preset: $("preset").value, players: Number($("players").value), seat: Number($("seat").value), agents,
      });
      $("setup").hidden = true;
      renderTable(view);
    } catch (err) {
      showMessage(err.message);
    }
  });
  $("next-deal").addEventListener("click", async () => {
    showMessage("");
    try {
      renderTable(await api("POST", `/api/tables/${play.view.table}/deals`));
    } catch (err) {
      showMessage(err.message);
      leaveIfClosed(err);
    }
  });
  $("leave").addEventListener("click", async () => {
    try { await api("DELETE", `/api/tables/${play.view.table}`); } catch (err) { /* expired already */ }
    $("table").hidden = true;
    $("setup").hidden = false;
  });
  $("replay-this").addEventListener("click", async () => {
    const response = await fetch(play.view.result.history);
    await loadReplay(await response.text(), String(play.view.seat));
    switchTab("replay");
  });
}

// ------------------------------------------------------------------ replaying
const replay = { frames: [], at: 0, text: null, agents: null };

function renderFrame() {
  const frame = replay.frames[replay.at];
  renderBoard($("replay-board"), frame, replay.agents);
  // From a seat (not every hand open) the board shows no hand: the frame carries that seat's own, shown below it.
  const fromSeat = !frame.hands;
  $("replay-hand-area").hidden = !fromSeat;
  if (fromSeat) {
    $("replay-hand-title").textContent = `Hand of ${seatName(frame, replay.agents, frame.seat)}`;
    $("replay-hand").replaceChildren(...frame.hand.map((c) => card(c)));
  }
  renderLog($("replay-log"), frame, replay.agents);
  $("replay-position").textContent = `deal ${frame.deal + 1}, position ${replay.at + 1} of ${replay.frames.length}`;
  $("replay-next-action").textContent = frame.next
    ? `Next: ${seatName(frame, replay.agents, frame.next.seat)} ${frame.next.text}` : "The deal is over.";
  $("replay-result").hidden = !frame.result;
  if (frame.result) renderResult($("replay-result-table"), frame, frame.result, replay.agents);
  $("replay-first").disabled = $("replay-prev").disabled = replay.at === 0;
  $("replay-last").disabled = $("replay-next").disabled = replay.at === replay.frames.length - 1;
}

async function loadReplay(text, view) {
  showMessage("");
  replay.text = text;
  const query = view === "open" ? "open=1" : `seat=${view}`;
  try {
    const data = await api("POST", `/api/replays?${query}`, text, true);
    replay.frames = data.frames;
    replay.agents = data.seats.map((s) => s.agent);
    replay.at = 0;
    $("replay-table").hidden = false;
    fillReplaySeats(data.seats, view);
    renderFrame();
  } catch (err) {
    showMessage(err.message);
  }
}

function fillReplaySeats(seats, chosen) {
  const options = seats.map((s) => el("option", { value: String(s.seat) }, `as player_${s.seat}${s.agent ? ` (${s.agent})` : ""}`));
  $("replay-seat").replaceChildren(...options, el("option", { value: "open" }, "every hand open"));
  $("replay-seat").value = chosen;
}

function setUpReplay() {
  $("replay-file").addEventListener("change", async () => {
    const file = $("replay-file").files[0];
    if (!file) return;
    replay.text = await file.text();
    try {
      const seats = JSON.parse(replay.text).seats;
      if (Array.isArray(seats)) fillReplaySeats(seats, String(Math.max(0, seats.findIndex((s) => s.agent === "human"))));
    } catch (err) { /* the server says what is wrong on Load */ }
  });
  $("replay-setup").addEventListener("submit", (event) => {
    event.preventDefault();
    if (replay.text === null) { showMessage("Choose a hand history file first."); return; }
    loadReplay(replay.text, $("replay-seat").value);
  });
  $("replay-seat").addEventListener("change", () => { if (replay.frames.length) loadReplay(replay.text, $("replay-seat").value); });
  const go = (to) => { replay.at = Math.max(0, Math.min(replay.frames.length - 1, to)); renderFrame(); };
  $("replay-first").addEventListener("click", () => go(0));
  $("replay-prev").addEventListener("click", () => go(replay.at - 1));
  $("replay-next").addEventListener("click", () => go(replay.at + 1));
  $("replay-last").addEventListener("click", () => go(replay.frames.length - 1));
  document.addEventListener("keydown", (event) => {
    if ($("replay-view").hidden || !replay.frames.length || event.target.tagName === "INPUT") return;
    if (event.key === "ArrowLeft") go(replay.at - 1);
    if (event.key === "ArrowRight") go(replay.at + 1);
  });
}

function switchTab(name) {
  $("play-view").hidden = name !== "play";
  $("replay-view").hidden = name !== "replay";
  $("tab-play").classList.toggle("active", name === "play");
  $("tab-replay").classList.toggle("active", name === "replay");
}

document.addEventListener("DOMContentLoaded", () => {
  $("tab-play").addEventListener("click", () => switchTab("play"));
  $("tab-replay").addEventListener("click", () => switchTab("replay"));
  setUp().catch((err) => showMessage(err.message));
  setUpReplay();
});
