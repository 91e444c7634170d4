// A table this browser plays (a seat) or watches: its play stream read, the events shown
// one at a time at the house-bot pace, the person's moves sent, May I? windows answered
// by the person's standing choice, and the round summary holding play until "Next round".

import { api, readSse, requestId, ApiError } from "./api.js";
import { announce, errorText, h, num, readJson, sleep, stored } from "./dom.js";
import { rebuildRoundEnds } from "./ends.js";
import { TableLog } from "./log.js";
import { applyEvent, describeEvent } from "./model.js";
import { render } from "./panels.js";
import { recordCommitment, recordDeal } from "./records.js";

let current = null; // the open table (play or watch), closed when the route changes

export function currentTable() { return current; }
export function closeTable() {
  if (current) { current.closed = true; current.abort.abort(); current = null; }
}

// house-bot pace: ms between other seats' moves (the header's select; ?pace= wins)
const $pace = document.getElementById("pace");
export function pace() { return num($pace.value); }

// what the page answers to a May I? window without asking (the table's select)
export const MAY_I = [
  ["ask", "Ask me every time"],
  ["useful", "Pass unless it completes my contract"],
  ["never", "Never claim"],
];
export function mayIPolicy() { return localStorage.getItem("glintwick.mayI") || "useful"; }

// the moves a person watches one by one at the chosen pace (the rest show at once)
const PACED = new Set([
  "EVENT_TYPE_DREW", "EVENT_TYPE_DISCARDED", "EVENT_TYPE_LAID_CONTRACT", "EVENT_TYPE_LAID_OFF",
  "EVENT_TYPE_EXTRA_MELD", "EVENT_TYPE_JOKER_SWAPPED", "EVENT_TYPE_CLAIM_AWARDED",
]);

export function tableScreen(root, id, { watch = false } = {}) {
  const mine = watch ? null : stored(id);
  const t = {
    id, seat: mine ? mine.seat : null, token: mine ? mine.token : null, watch,
    game: null, view: null, prompt: null, latestPrompt: null, receivedVersion: -1, actedVersion: -1,
    queue: [], log: new TableLog(id), busy: false, closed: false, paused: false,
    order: readJson(sessionStorage, `glintwick.order.${id}`, []),
    sort: localStorage.getItem("glintwick.sort") || "suit", selected: null,
    roundEnd: null, gameEnd: null, rounds: readJson(sessionStorage, `glintwick.rounds.${id}`, []),
    lastCursor: "", receivedCursor: "", streamOver: false, lastVersion: -1, modelVersion: -1,
    abort: new AbortController(), error: "", notice: "", preview: null, hint: null, connected: false,
    answered: new Set(), useful: null, root,
  };
  t.act = (action, what) => act(t, action, what);
  t.render = () => render(t);
  t.nextRound = () => {
    t.roundEnd = null; t.paused = false;
    if (t.heldView) { t.view = t.heldView; t.heldView = null; } // (the next round's deal, kept behind the summary)
    localStorage.removeItem(`glintwick.held.${id}`);
    render(t); pump(t);
  };
  current = t;
  root.append(h("p", { role: "status" }, "Connecting to the table…"));
  api.getGame(id).then((g) => {
    t.game = g;
    render(t);
    connect(t);
    if (!watch) waitForPlayers(t);
  }).catch((e) => { t.error = errorText(e); render(t); });
  return t;
}

async function waitForPlayers(t) {
  while (!t.closed && t.game && t.game.seatInfo.some((s) => !s.joined)) {
    await sleep(1500);
    if (t.closed) return;
    try { t.game = await api.getGame(t.id); render(t); } catch { /* try again */ }
  }
}

async function connect(t) {
  let failures = 0;
  while (!t.closed) {
    const base = t.watch ? `/v1/games/${t.id}:watch` : `/v1/games/${t.id}:play`;
    // resume after the last event *received*, not the last shown: at a pace above 0 the
    // queue still holds events, which the server must not send again
    const cursor = t.receivedCursor || t.lastCursor;
    const path = cursor ? `${base}?after=${encodeURIComponent(cursor)}` : base;
    try {
      await readSse(path, {
        token: t.token, signal: t.abort.signal,
        onOpen: () => { failures = 0; t.connected = true; },
        onMessage: (kind, ident, data) => receive(t, kind, data),
      });
      if (t.gameEnd || t.closed || t.streamOver) return;
    } catch (e) {
      if (t.closed) return;
      if (e instanceof ApiError && (e.status === 401 || e.status === 404)) {
        t.error = errorText(e); render(t); return;
      }
    }
    t.connected = false;
    if (t.gameEnd) return;
    failures += 1;
    render(t);
    await sleep(Math.min(5000, 300 * failures));
  }
}

// a message of the stream as it arrives (before the pace shows it): what the server is
// at now, the newest prompt (moves are sent at its version), May I? answered by policy
function receive(t, kind, data) {
  const ev = t.watch ? (kind === "event" ? data : null) : data.event;
  if (ev) {
    if (ev.cursor) t.receivedCursor = ev.cursor;
    t.receivedVersion = Math.max(t.receivedVersion, num(ev.version));
  }
  const prompt = !t.watch && data.prompt;
  if (prompt) {
    t.latestPrompt = prompt;
    t.receivedVersion = Math.max(t.receivedVersion, num(prompt.version));
    // (answered once the stream is quiet: every other seat's answer brings a newer prompt)
    if (prompt.view && prompt.view.phase === "PHASE_CLAIM") setTimeout(() => { if (t.latestPrompt === prompt) answerByPolicy(t, prompt); }, 60);
  }
  // the stream is over for good once the game has ended (its session closed without
  // an error): nothing to reconnect for while the queue plays out
  if ((ev && (ev.type === "EVENT_TYPE_GAME_ENDED" || ev.type === "EVENT_TYPE_GAME_ABANDONED")) || (kind === "closed" && !(data.closed && data.closed.error))) {
    t.streamOver = true;
  }
  t.queue.push({ kind, data });
  pump(t);
}

// a May I? window: its round, the turns completed (its discard ended one) and its card
const windowKey = (view) => `${view.round}:${num(view.turnsCompleted)}:${view.claim && view.claim.card ? view.claim.card.id : view.discardTop && view.discardTop.id}`;

// "never": pass at once; "useful": pass unless the card lays the contract now (the
// solver, AnalyseHand, on the hand with the card), else ask; "ask": the person answers
async function answerByPolicy(t, prompt) {
  const policy = mayIPolicy();
  const key = windowKey(prompt.view);
  if (policy === "ask" || t.answered.has(key)) return;
  const pass = (prompt.legalActions || []).find((a) => a.passClaim);
  if (!pass) return;
  t.answered.add(key);
  const me = prompt.view.players[t.seat] || {};
  const card = prompt.view.claim && prompt.view.claim.card;
  if (policy === "useful" && !me.opened && card) {
    try {
      const rules = { ...t.game.ruleSet };
      delete rules.hash;
      const ids = [...prompt.view.hand.map((c) => c.id), card.id];
      const answer = await api.analyse({ customRuleSet: rules, round: prompt.view.round, handIds: ids });
      if (answer.feasible) {
        t.answered.delete(key);
        t.useful = key;
        // (the pump skipped the prompt while the answer was not known: show it now)
        if (t.latestPrompt === prompt && !t.paused && t.lastVersion >= num(prompt.version)) showPrompt(t, prompt);
        render(t);
        return;
      }
    } catch { t.answered.delete(key); return; } // (no analysis: ask the person)
  }
  try {
    await send(t, pass, prompt);
  } catch (e) {
    // (not answered: the person answers, as with "ask")
    console.warn("May I? not answered by the page:", e && e.reason, e && e.message);
    t.answered.delete(key);
    t.useful = key;
    if (t.latestPrompt === prompt && !t.paused && t.lastVersion >= num(prompt.version)) showPrompt(t, prompt);
    render(t);
  }
}

// the stream's messages, one at a time: other seats' moves wait the chosen pace; a
// round's end holds the rest until the person asks for the next round
async function pump(t) {
  if (t.busy) return;
  t.busy = true;
  try {
    while (t.queue.length && !t.closed && !t.paused) {
      const { kind, data } = t.queue.shift();
      const msg = t.watch ? (kind === "snapshot" ? { snapshot: data } : { event: data }) : data;
      if (msg.snapshot) {
        installView(t, msg.snapshot);
        t.lastVersion = num(msg.snapshot.version);
        holdAfterRefresh(t);
      } else if (msg.event) {
        await showEvent(t, msg.event);
      } else if (msg.prompt) {
        showPrompt(t, msg.prompt);
      } else if (msg.closed) {
        if (msg.closed.error) t.error = errorText(new ApiError(0, msg.closed.error));
        t.finished = true;
      }
      if (!t.queue.length || t.paused) { t.log.flush(); render(t); }
    }
  } finally {
    t.busy = false;
  }
  if (t.view && !t.prompt && !t.closed && !t.paused && t.view.discardSize > 0 && !t.view.discardTop) resync(t);
}

async function showEvent(t, ev) {
  const version = num(ev.version);
  if (PACED.has(ev.type) && ev.seat !== t.seat && pace() > 0 && t.view && t.modelVersion >= 0 && version > t.modelVersion) {
    t.log.flush();
    render(t);
    await sleep(pace());
  }
  t.lastVersion = Math.max(t.lastVersion, version);
  t.lastCursor = ev.cursor;
  if (t.prompt && version > num(t.prompt.version)) t.prompt = null;
  if (t.view && version > t.modelVersion) {
    applyEvent(t, ev);
    if (ev.type === "EVENT_TYPE_ROUND_STARTED" && ev.seat === undefined) t.order = []; // a new hand: sorted afresh
    if (ev.type === "EVENT_TYPE_ROUND_ENDED") roundEnded(t);
  }
  if (ev.type === "EVENT_TYPE_ROUND_STARTED") {
    const rs = ev.roundStarted;
    recordCommitment(t.id, rs.round, rs.commitment);
    if (rs.hand && rs.hand.length) recordDeal(t.id, rs.round, rs.hand, rs.upcard);
  }
  const text = describeEvent(t, ev);
  if (text) {
    t.log.add(text);
    if (ev.seat !== t.seat || ev.type === "EVENT_TYPE_CLAIM_AWARDED") announce(text);
  }
}

// a round's scores join the score sheet; the table holds until "Next round" (the page
// is created with no May I? deadline against house bots, so nothing times out meanwhile)
function roundEnded(t) {
  const r = t.roundEnd;
  if (!t.rounds.some((x) => x.round === r.round)) {
    t.rounds.push(r);
    sessionStorage.setItem(`glintwick.rounds.${t.id}`, JSON.stringify(t.rounds));
  }
  if (!t.watch && r.round < num(t.view.rounds)) {
    t.paused = true;
    // (kept across a refresh: the summary is shown again until "Next round")
    localStorage.setItem(`glintwick.held.${t.id}`, String(r.round));
  }
}

// After a refresh (or in another tab), a round summary the person had not yet left with
// "Next round" holds the table again: from this tab's records, else rebuilt from the
// public events (ends.js). As without a refresh, the table stays on that round (its
// title, no melds, no hand) until "Next round": the snapshot's next deal waits behind it.
function holdAfterRefresh(t) {
  const held = num(localStorage.getItem(`glintwick.held.${t.id}`));
  if (t.watch || !held || t.roundEnd || t.view.gameOver || num(t.view.round) <= held) return;
  t.paused = true;
  t.heldView = t.view;
  t.view = {
    ...t.view, round: held, contract: (t.game.ruleSet.contracts || [])[held - 1] || t.view.contract,
    hand: [], table: [], pile: [], discardTop: null, discardSize: 0, stockSize: 0, claim: null, current: -1,
    lastMove: null, drawn: null, players: t.view.players.map((p) => ({ ...p, handSize: 0, opened: false })),
  };
  const show = (r) => {
    t.roundEnd = r;
    t.view.players.forEach((p, i) => { p.handSize = num(r.left[i]); });
    render(t);
  };
  const kept = t.rounds.find((x) => x.round === held);
  if (kept) { show(kept); return; }
  rebuildRoundEnds(t.game, t.id, held).then((found) => {
    for (const r of found) if (!t.rounds.some((x) => x.round === r.round)) t.rounds.push(r);
    t.rounds.sort((a, b) => a.round - b.round);
    sessionStorage.setItem(`glintwick.rounds.${t.id}`, JSON.stringify(t.rounds));
    const r = found.find((x) => x.round === held);
    if (r && !t.closed) show(r); else t.nextRound();
  }).catch(() => t.nextRound());
}

// a prompt is shown only while it is the newest the stream brought (older ones of the
// same May I? window, or ones the person already answered, are skipped)
function showPrompt(t, prompt) {
  const version = num(prompt.version);
  if (version < t.lastVersion || version < t.actedVersion) return;
  if (prompt !== t.latestPrompt || version < t.receivedVersion) return;
  if (prompt.view.phase === "PHASE_CLAIM") {
    const key = windowKey(prompt.view);
    // (a window the person's May I? choice answers is not shown, unless the card completes the contract)
    if (t.answered.has(key) || (mayIPolicy() !== "ask" && t.useful !== key)) return;
  }
  installView(t, prompt.view);
  t.prompt = prompt;
  t.preview = null;
  t.notice = "";
  announce(prompt.view.phase === "PHASE_CLAIM" ? "May I? You may claim the discard." : "Your move.");
  cue();
}

// a soft cue when the table turns to the person (no sound: a short flash of the title)
function cue() {
  document.title = document.title.startsWith("● ") ? document.title : `● ${document.title}`;
  setTimeout(() => { document.title = document.title.replace(/^● /, ""); }, 1500);
}

// the events do not say what a taken discard uncovered: read the view (GetView) once the
// stream is idle, and keep it only if nothing moved since
async function resync(t) {
  const version = t.lastVersion;
  try {
    const view = await api.view(t.id, t.token);
    if (num(view.version) === t.lastVersion && version === t.lastVersion && !t.queue.length && !t.busy && !t.prompt) {
      installView(t, view);
      render(t);
    }
  } catch { /* the next prompt brings it */ }
}

function installView(t, received) {
  const view = structuredClone(received); // (the events change the page's copy, never a prompt's)
  recordCommitment(t.id, view.round, view.commitment);
  view.players = view.players || [];
  view.table = view.table || [];
  view.hand = view.hand || [];
  const kept = t.view && t.view.pile && t.view.round === view.round ? t.view.pile : [];
  const same = view.discardTop && kept.length && kept[kept.length - 1].id === view.discardTop.id;
  view.pile = same ? kept : view.discardTop ? [view.discardTop] : [];
  if (t.view && t.view.round !== view.round) t.order = [];
  view.lastMove = t.view ? t.view.lastMove : null;
  view.drawn = t.view && t.view.round === view.round ? t.view.drawn : null; // (the card the person drew last)
  t.view = view;
  t.modelVersion = num(view.version);
  if (view.gameOver && !t.gameEnd) {
    t.gameEnd = { scores: view.players.map((p) => p.score), winners: view.winners || [], seed: view.seed, abandoned: !!view.abandoned };
  }
}

// The version a move is sent at is the newest prompt's that offers the same move (at a
// pace above 0 the page may still be showing an older one: in a May I? window every
// other seat's answer moves the game on); refused as stale, it waits briefly for a newer
// prompt that still offers it and sends it again.
async function send(t, action, shown) {
  const same = JSON.stringify(action);
  const offered = (p) => p && (p.legalActions || []).some((a) => JSON.stringify(a) === same);
  let sentAt = -1;
  for (let attempt = 0; attempt < 4; attempt++) {
    const fresh = [t.latestPrompt, shown].filter(offered).sort((a, b) => num(b.version) - num(a.version))[0];
    if (!fresh || num(fresh.version) <= sentAt) {
      await sleep(250);
      continue;
    }
    sentAt = num(fresh.version);
    try {
      const result = await api.act(t.id, t.token, { seat: t.seat, expectedVersion: fresh.version, requestId: requestId(), action });
      t.actedVersion = Math.max(t.actedVersion, num(result && result.version));
      return;
    } catch (e) {
      if (!(e instanceof ApiError && e.reason === "STALE_VERSION")) throw e;
      await sleep(150);
    }
  }
  throw new ApiError(409, { reason: action.claim || action.passClaim ? "NO_CLAIM_WINDOW" : "STALE_VERSION", message: "too late" });
}

async function act(t, action, what) {
  if (!t.prompt || t.acting) return;
  t.acting = true;
  t.error = "";
  t.notice = "";
  const shown = t.prompt;
  const claimKey = shown.view.phase === "PHASE_CLAIM" ? windowKey(shown.view) : null;
  render(t);
  try {
    await send(t, action, shown);
    if (claimKey) t.answered.add(claimKey);
    if (t.prompt === shown) t.prompt = null;
    t.selected = null;
    t.preview = null;
    t.hint = null;
    t.useful = null;
    announce(what);
  } catch (e) {
    t.error = errorText(e);
    if (e instanceof ApiError && e.status === 409 && t.prompt === shown) t.prompt = null;
  } finally {
    t.acting = false;
    render(t);
  }
}
