// A remote bot in JavaScript (Node, the ws package): it plays the first legal action. docs/protocol.md.
// Usage: node first_legal.js ws://127.0.0.1:8765/bot NAME TOKEN_FILE [MATCHES]
const fs = require("fs");
const WebSocket = require("ws");

const [url, name, tokenFile, matches = "0"] = process.argv.slice(2);
const token = fs.readFileSync(tokenFile, "utf8").trim();
let left = Number(matches); // 0: play until the server closes the connection

const ws = new WebSocket(url);
ws.on("open", () => ws.send(JSON.stringify({ type: "hello", protocol: 1, name, token })));
ws.on("message", (data) => {
  const message = JSON.parse(data);
  if (message.type === "turn") {
    ws.send(JSON.stringify({ type: "action", turn: message.turn, action: message.legal[0].action }));
  } else if (message.type === "error") {
    console.error(`${name}: ${message.message}`);
    if (message.fatal) process.exitCode = 1;
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
