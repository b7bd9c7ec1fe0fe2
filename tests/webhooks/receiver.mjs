// A webhook receiver for grantry's tests: verifies every delivery with the official Standard
// Webhooks library (npm `standardwebhooks`), dedupes by webhook-id, and records what arrived.
//
//   RECEIVER_SECRET=whsec_… node receiver.mjs
// prints {"url": "http://127.0.0.1:PORT/hook"} on its first line and exits when stdin closes.
//
//   POST /hook     a delivery: 400 if it does not verify (counted as forged), else the next
//                  scripted status if any (counted as an attempt, not received), else 204
//                  and recorded once per webhook-id (a repeat is counted as a duplicate)
//   POST /script   {"statuses": [500, 200, …]} answers to give first; {"down": true} drops
//                  every connection unanswered until {"down": false}; {"hold": true} keeps
//                  deliveries waiting, unanswered, until {"hold": false} lets them through
//   GET  /state    {"received": [{id, type, connection_id, timestamp, data}], "duplicates",
//                   "forged", "attempts"}
import http from "node:http";
import { Webhook } from "standardwebhooks";

const webhook = new Webhook(process.env.RECEIVER_SECRET);
const state = { received: [], duplicates: 0, forged: 0, attempts: 0, held: 0 };
const seen = new Set();
let statuses = [];
let down = false;
let hold = false;
let held = [];

function body(req) {
  return new Promise((resolve) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

async function hook(req, res) {
  if (down) {
    req.socket.destroy();
    return;
  }
  const raw = await body(req);
  if (hold) {
    await new Promise((resolve) => held.push(resolve));
  }
  state.attempts += 1;
  let event;
  try {
    event = webhook.verify(raw, req.headers);
  } catch {
    state.forged += 1;
    res.writeHead(400).end();
    return;
  }
  if (statuses.length > 0) {
    res.writeHead(statuses.shift()).end();
    return;
  }
  const id = req.headers["webhook-id"];
  if (seen.has(id)) {
    state.duplicates += 1;
  } else {
    seen.add(id);
    state.received.push({
      id,
      type: event.type,
      connection_id: event.data.connection_id,
      timestamp: event.timestamp,
      data: event.data,
    });
  }
  res.writeHead(204).end();
}

const server = http.createServer(async (req, res) => {
  if (req.method === "POST" && req.url === "/hook") return hook(req, res);
  if (req.method === "POST" && req.url === "/script") {
    const script = JSON.parse(await body(req));
    if (script.statuses) statuses = script.statuses;
    if (typeof script.down === "boolean") down = script.down;
    if (typeof script.hold === "boolean") {
      hold = script.hold;
      if (!hold) held.splice(0).forEach((resolve) => resolve());
    }
    res.writeHead(204).end();
    return;
  }
  if (req.method === "GET" && req.url === "/state") {
    state.held = held.length;
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(state));
    return;
  }
  res.writeHead(404).end();
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}/hook` }) + "\n");
});
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
