// A remote bot in JavaScript (Node, the ws package): it plays the first legal action. docs/protocol.md.
// Usage: node first_legal.js ws://127.0.0.1:8765/bot NAME TOKEN_FILE [MATCHES]
// Exit status: 2 when the server refuses the bot itself (its protocol version, name or token: starting it again
// would be refused again); 1 after another fatal error or a socket error (worth starting it again); else 0.
const fs = require("fs");
const WebSocket = require("ws");

const [url, name, tokenFile, matches = "0"] = process.argv.slice(2);
const token = fs.readFileSync(tokenFile, "utf8").trim();
let left = Number(matches); // 0: play until the server closes the connection
const REFUSED = /not spoken|unknown bot|wrong token/; // the words of an older server, which sends no reason
const aboutTheBot = (error) =>
  error.reason ? ["version", "auth", "name"].includes(error.reason) : REFUSED.test(error.message);

const ws = new WebSocket(url);
ws.on("open", () => ws.send(JSON.stringify({ type: "hello", protocol: 1, name, token })));
ws.on("message", (data) => {
  const message = JSON.parse(data);
  if (message.type === "turn") {
    ws.send(JSON.stringify({ type: "action", turn: message.turn, action: message.legal[0].action }));
  } else if (message.type === "error") {
    console.error(`${name}: ${message.message}`);
    if (message.fatal) process.exitCode = aboutTheBot(message) ? 2 : 1;
  } else if (message.type === "match_end") {
    console.log(`${name}: match ${message.match} ${message.status}`);
    if (--left === 0) ws.close();
  }
});
ws.on("close", () => process.exit());
ws.on("error", (err) => {
  console.error(`${name}: ${err.message}`);
  process.exit(1);
});
