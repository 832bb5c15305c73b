// A bot written from docs/protocol.md alone (Node and the ws package), for benchmarks/arena_outside.py: it answers
// each turn, THINK_MS after it came (0: at once), with a random legal action (seeded by SEED and its name) or with
// the first, and at each match's end
// appends one JSON line to LOG_FILE: the match, and each of its turns as [turn, deal, received ns, answered ns] on the
// machine's monotonic clock (CLOCK_MONOTONIC, which the other bots' processes read too).
// Usage: node arena_outside_bot.js URL NAME TOKEN_FILE first|random SEED THINK_MS LOG_FILE [LOCAL_ADDRESS]
const fs = require("fs");
const WebSocket = require("ws");

const [url, name, tokenFile, moves, seed, thinkMs, logFile, localAddress] = process.argv.slice(2);
const think = Number(thinkMs);
const token = fs.readFileSync(tokenFile, "utf8").trim();
let state = 2166136261; // FNV-1a of the seed and the name, then xorshift32: the bot's own seeded draws
for (const c of `${seed}:${name}`) state = Math.imul(state ^ c.charCodeAt(0), 16777619) >>> 0;
const draw = (n) => {
  state ^= state << 13;
  state ^= state >>> 17;
  state ^= state << 5;
  state >>>= 0;
  return state % n;
};
const turns = new Map(); // match id -> [[turn, deal, received, answered], ...]

const ws = new WebSocket(url, localAddress ? { localAddress } : {});
ws.on("open", () => ws.send(JSON.stringify({ type: "hello", protocol: 1, name, token })));
ws.on("message", (data) => {
  const received = process.hrtime.bigint();
  const message = JSON.parse(data);
  if (message.type === "turn") {
    const legal = message.legal;
    const action = legal[moves === "random" ? draw(legal.length) : 0].action;
    if (!turns.has(message.match)) turns.set(message.match, []);
    const answer = () => {
      const answered = process.hrtime.bigint(); // before the send: a turn that follows it comes after this
      ws.send(JSON.stringify({ type: "action", turn: message.turn, action }));
      turns.get(message.match).push([message.turn, message.deal, Number(received), Number(answered)]);
    };
    if (think > 0) setTimeout(answer, think);
    else answer();
  } else if (message.type === "match_end") {
    const line = { match: message.match, bot: name, status: message.status, turns: turns.get(message.match) || [] };
    fs.appendFileSync(logFile, JSON.stringify(line) + "\n");
    turns.delete(message.match);
  } else if (message.type === "error") {
    console.error(`${name}: ${message.message}`);
  }
});
ws.on("close", () => process.exit(0));
ws.on("error", (err) => {
  console.error(`${name}: ${err.message}`);
  process.exit(1);
});
