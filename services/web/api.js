// The public HTTP API (docs/API.md), as any other client calls it: JSON bodies in
// protobuf's JSON mapping, seat tokens in Authorization, Server-Sent Events read with
// fetch (an EventSource cannot send Authorization).

export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.message ? body.message : `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code;
    this.reason = body && body.reason;
  }
}

function headers(token, json) {
  const h = {};
  if (token) h.Authorization = `Bearer ${token}`;
  if (json) h["Content-Type"] = "application/json";
  return h;
}

// A request id for a call the server applies once per id (a join, a move): a retry
// with the same id gets the first call's answer (docs/API.md: SubmitAction, JoinGame).
export function requestId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  // (randomUUID needs a secure context: a page served over plain HTTP has not)
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

// Calls whose body carries a requestId are sent again, with the same id, when the
// answer is lost (the connection failed) or the server is briefly unavailable (503):
// the first attempt may have been applied, and the id makes the retry safe.
const RETRY_DELAYS_MS = [250, 1000, 2000];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export async function call(method, path, { body, token } = {}) {
  const retries = body && body.requestId ? RETRY_DELAYS_MS : [];
  for (let attempt = 0; ; attempt++) {
    try {
      return await callOnce(method, path, body, token);
    } catch (e) {
      const lost = !(e instanceof ApiError) || e.status === 503;
      if (!lost || attempt >= retries.length) throw e;
      await sleep(retries[attempt]);
    }
  }
}

async function callOnce(method, path, body, token) {
  const response = await fetch(path, {
    method,
    headers: headers(token, body !== undefined),
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
  });
  let data = null;
  const text = await response.text();
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

export const api = {
  ruleSets: () => call("GET", "/v1/rulesets"),
  createGame: (body) => call("POST", "/v1/games", { body }),
  getGame: (id) => call("GET", `/v1/games/${encodeURIComponent(id)}`),
  join: (id, body) => call("POST", `/v1/games/${encodeURIComponent(id)}:join`, { body: { requestId: requestId(), ...body } }),
  fillWithBots: (id, strategy, token) =>
    call("POST", `/v1/games/${encodeURIComponent(id)}:fillWithBots`, { body: { strategy }, token }),
  lobby: (name) => call("GET", `/v1/lobby${name ? `?ruleSetName=${encodeURIComponent(name)}` : ""}`),
  view: (id, token) => call("GET", `/v1/games/${encodeURIComponent(id)}/view`, { token }),
  act: (id, token, body) => call("POST", `/v1/games/${encodeURIComponent(id)}:play`, { body, token }),
  analyse: (body) => call("POST", "/v1/analyse", { body }),
  replay: (id) => call("GET", `/v1/games/${encodeURIComponent(id)}/replay`),
};

// Read one SSE stream until it ends, the signal aborts it or it fails; onMessage(kind,
// id, data) for each message. Resolves when the server ended the stream.
export async function readSse(path, { token, signal, onMessage, onOpen }) {
  const response = await fetch(path, { headers: headers(token, false), signal, cache: "no-store" });
  if (!response.ok) {
    let data = null;
    try { data = await response.json(); } catch { data = null; }
    throw new ApiError(response.status, data);
  }
  if (onOpen) onOpen();
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let kind = "message";
      let id = "";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") kind = value;
        else if (field === "id") id = value;
        else if (field === "data") data.push(value);
      }
      if (data.length) await onMessage(kind, id, JSON.parse(data.join("\n")));
    }
  }
}
