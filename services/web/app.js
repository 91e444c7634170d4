// The browser table (docs/WEB.md): plain ES modules, no build step, no other origin.
// Screens by the URL's fragment: #/ (start), #/lobby, #/game/ID (a seat: its token is
// kept in localStorage), #/join/ID (a shared table), #/watch/ID (a spectator),
// #/replay/ID (a finished game, its deals checked).

import { api, readSse, requestId, ApiError } from "./api.js";
import {
  cardFace, cardLabel, describeContract, isJoker, isRed, meldStandsFor, meldTitle,
  sortCards, standsForFace, standsForLabel,
} from "./cards.js";
import { dealFrom, roundSeed, shuffledDeck, verifyRounds } from "./fair.js";

const $app = document.getElementById("app");
const $live = document.getElementById("live");
const params = new URLSearchParams(location.search);

// ------------------------------------------------------------------ small helpers

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function announce(text) {
  const line = h("p", {}, text);
  $live.append(line);
  while ($live.childElementCount > 5) $live.firstElementChild.remove();
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const num = (v) => Number(v || 0);

function stored(id) {
  try { return JSON.parse(localStorage.getItem(`glintwick.seat.${id}`) || "null"); } catch { return null; }
}
function store(id, value) { localStorage.setItem(`glintwick.seat.${id}`, JSON.stringify(value)); }

// house-bot pace: ms between other seats' moves (the header's select; ?pace= wins)
const $pace = document.getElementById("pace");
function pace() { return num($pace.value); }
{
  const chosen = params.get("pace") ?? localStorage.getItem("glintwick.pace") ?? "800";
  if (![...$pace.options].some((o) => o.value === chosen)) $pace.append(h("option", { value: chosen }, `${chosen} ms`));
  $pace.value = chosen;
  $pace.addEventListener("change", () => localStorage.setItem("glintwick.pace", $pace.value));
}

function cardEl(card, { standsFor, ...attrs } = {}) {
  const code = card.code;
  const label = standsFor && isJoker(code) ? `joker standing for ${standsForLabel(standsFor)}` : cardLabel(code);
  return h("span", { class: `card${isRed(code) ? " red" : ""}${isJoker(code) ? " joker" : ""}`, role: "img", "aria-label": label, ...attrs },
    cardFace(code), standsFor && isJoker(code) ? h("small", { class: "stands" }, `=${standsForFace(standsFor)}`) : null);
}

function seatName(game, seat, mine) {
  const info = game && game.seatInfo ? game.seatInfo[seat] : null;
  let name = info && info.name ? info.name : `Seat ${seat + 1}`;
  if (info && info.bot) name = `${info.bot[0].toUpperCase()}${info.bot.slice(1)} bot ${seat + 1}`;
  return seat === mine ? `${name} (you)` : name;
}

function errorText(e) {
  if (e instanceof ApiError) return `${e.reason || e.code || e.status}: ${e.message}`;
  return String(e && e.message ? e.message : e);
}

function screen(title, ...children) {
  document.title = `${title} · Glintwick`;
  $app.replaceChildren(...children);
}

// ------------------------------------------------------------------ start screen

// house bots offered to people by strength, weakest first (docs/BOTS.md measures them)
const STRENGTHS = [["random", "Beginner"], ["greedy", "Casual"], ["strong", "Skilled"], ["expert", "Expert"]];

// dev options (docs/WEB.md): ?rounds=N plays the preset's first N contracts only, as a
// custom rule set (&from=K starts at the K-th, &deal=N deals N cards a round, &turnCap=N
// ends a round after N completed turns, &players=N lowers the minimum seats);
// ?seed=HEX deals a chosen seed
async function rulesFor(name) {
  const rounds = num(params.get("rounds"));
  if (!rounds) return { ruleSetName: name };
  const { ruleSets } = await api.ruleSets();
  const preset = { ...ruleSets.find((r) => r.name === name) };
  delete preset.hash;
  const from = Math.max(1, num(params.get("from")) || 1) - 1;
  preset.contracts = preset.contracts.slice(from, from + rounds);
  if (params.get("turnCap")) preset.turnCap = num(params.get("turnCap"));
  if (params.get("deal")) preset.contracts = preset.contracts.map((c) => ({ ...c, deal: num(params.get("deal")) }));
  if (params.get("players")) preset.minPlayers = num(params.get("players"));
  return { customRuleSet: preset };
}

function startScreen() {
  const status = h("p", { role: "status", class: "status" });
  const name = h("input", { id: "name", name: "name", autocomplete: "nickname", maxlength: "40", value: localStorage.getItem("glintwick.name") || "" });
  const rules = h("select", { id: "rules", name: "rules" },
    h("option", { value: "whiskertrail" }, "Whiskertrail (2–4 players, eight stops)"),
    h("option", { value: "contract" }, "Contract rummy (4 seats, seven rounds, May I?)"));
  const seats = h("select", { id: "seats", name: "seats" },
    h("option", { value: "2" }, "2"), h("option", { value: "3" }, "3"), h("option", { value: "4", selected: true }, "4"));
  const strength = h("select", { id: "strength", name: "strength" },
    ...STRENGTHS.map(([v, t]) => h("option", { value: v, selected: v === "greedy" }, t)));
  const syncSeats = () => {
    const contract = rules.value === "contract";
    seats.disabled = contract && !params.get("players");
    if (contract && !params.get("players")) seats.value = "4";
  };
  rules.addEventListener("change", syncSeats);
  syncSeats();

  async function create(withBots) {
    status.textContent = "Creating the table…";
    localStorage.setItem("glintwick.name", name.value);
    try {
      const n = num(seats.value);
      const body = { ...(await rulesFor(rules.value)), seats: n, deadlines: { claimSeconds: 20 } };
      // a chosen seed deals hands its chooser can know: for games against house bots
      // only, never a table friends join (docs/WEB.md, "Dev options")
      if (params.get("seed") && withBots) body.seed = params.get("seed");
      if (withBots) {
        body.bots = {};
        for (let s = 1; s < n; s++) body.bots[s] = strength.value;
      }
      const game = await api.createGame(body);
      const joined = await api.join(game.gameId, { seat: 0, name: name.value });
      store(game.gameId, { seat: joined.seat, token: joined.token, strength: strength.value });
      location.hash = `#/game/${game.gameId}`;
    } catch (e) {
      status.textContent = `Could not create the table: ${errorText(e)}`;
    }
  }

  const form = h("form", { class: "panel", "aria-labelledby": "start-title", onsubmit: (e) => { e.preventDefault(); create(true); } },
    h("h1", { id: "start-title" }, "Play a free match"),
    h("p", {}, "No sign-up. Empty seats are played by house bots."),
    h("div", { class: "field" }, h("label", { for: "rules" }, "Rule set"), rules),
    h("div", { class: "field" }, h("label", { for: "name" }, "Your name"), name),
    h("div", { class: "field" }, h("label", { for: "seats" }, "Seats"), seats),
    h("div", { class: "field" }, h("label", { for: "strength" }, "House-bot strength"), strength),
    h("div", { class: "buttons" },
      h("button", { type: "submit", id: "play-bots" }, "Play against house bots"),
      h("button", { type: "button", id: "open-table", onclick: () => create(false) }, "Open a table for friends")),
    status);
  screen("New game", form, lobbyPanel(name));
  name.focus();
}

// ------------------------------------------------------------------ lobby

function lobbyPanel(nameInput) {
  const list = h("ul", { class: "lobby", "aria-label": "Open tables" });
  const status = h("p", { role: "status" }, "Looking for open tables…");
  async function refresh() {
    try {
      const { games = [] } = await api.lobby();
      status.textContent = games.length ? `${games.length} open table(s)` : "No open tables right now.";
      list.replaceChildren(...games.map((g) => h("li", {},
        h("span", {}, `${g.ruleSetName} · ${g.seats - g.seatsFree}/${g.seats} seated · `,
          (g.seatInfo || []).filter((s) => s.joined).map((s) => s.name || `seat ${s.seat + 1}`).join(", ")),
        h("button", { type: "button", onclick: () => joinTable(g.gameId, nameInput ? nameInput.value : "") }, `Join table ${g.gameId.slice(0, 6)}`))));
    } catch (e) {
      status.textContent = `The lobby could not be read: ${errorText(e)}`;
    }
  }
  refresh();
  return h("section", { class: "panel", "aria-labelledby": "lobby-title" },
    h("h2", { id: "lobby-title" }, "Lobby"), status, list,
    h("button", { type: "button", onclick: refresh }, "Refresh the lobby"));
}

async function joinTable(id, name) {
  const mine = stored(id);
  if (mine) { location.hash = `#/game/${id}`; return; }
  try {
    const joined = await api.join(id, { name: name || localStorage.getItem("glintwick.name") || "" });
    store(id, { seat: joined.seat, token: joined.token });
    location.hash = `#/game/${id}`;
  } catch (e) {
    screen("Join", h("section", { class: "panel" }, h("h1", {}, "Could not join"), h("p", {}, errorText(e)),
      h("a", { href: `#/watch/${id}` }, "Watch the table instead")));
  }
}

function joinScreen(id) {
  const name = h("input", { id: "join-name", autocomplete: "nickname", maxlength: "40", value: localStorage.getItem("glintwick.name") || "" });
  screen("Join a table", h("form", { class: "panel", onsubmit: (e) => { e.preventDefault(); localStorage.setItem("glintwick.name", name.value); joinTable(id, name.value); } },
    h("h1", {}, "Join a table"), h("p", {}, `Table ${id}`),
    h("div", { class: "field" }, h("label", { for: "join-name" }, "Your name"), name),
    h("button", { type: "submit" }, "Take a seat"), " ", h("a", { href: `#/watch/${id}` }, "or watch")));
  if (stored(id)) location.hash = `#/game/${id}`;
}

// ------------------------------------------------------------------ the table model

// the discard pile as far as this page saw it laid (the top of a fresh view only): what a
// taken discard uncovers, when the page saw it discarded
function takeDiscard(v) {
  v.pile.pop();
  v.discardTop = v.pile.length ? v.pile[v.pile.length - 1] : null;
}

// An event's payload: the member its type names (EVENT_TYPE_ROUND_STARTED: roundStarted).
function payloadOf(ev) {
  const key = ev.type.slice("EVENT_TYPE_".length).toLowerCase().replace(/_(\w)/g, (_, c) => c.toUpperCase());
  return ev[key] || {};
}

// why a round ended (RoundEndReason), for people
const ROUND_END_REASONS = {
  ROUND_END_REASON_WENT_OUT: "went out",
  ROUND_END_REASON_EXHAUSTIONS: "exhaustions",
  ROUND_END_REASON_TURN_CAP: "turn cap",
  ROUND_END_REASON_DRY: "dry",
  ROUND_END_REASON_DEAD: "dead round (every meld full)",
};
const reasonText = (reason) => ROUND_END_REASONS[reason] || reason;

// The page keeps the last full view (a snapshot or a prompt's) and applies the public
// events after it, so other seats' moves show one at a time, at the chosen pace.
function applyEvent(t, ev) {
  const v = t.view;
  const seat = ev.seat;
  const p = seat === undefined ? null : v.players[seat];
  const mine = seat !== undefined && seat === t.seat;
  const removeFromHand = (ids) => { v.hand = v.hand.filter((c) => !ids.includes(c.id)); };
  const data = payloadOf(ev);
  switch (ev.type) {
    case "EVENT_TYPE_ROUND_STARTED":
      v.round = data.round; v.rounds = data.rounds; v.contract = data.contract; v.table = [];
      v.discardTop = data.upcard || null; v.discardSize = data.upcard ? 1 : 0; v.stockSize = data.stockSize;
      v.pile = data.upcard ? [data.upcard] : [];
      for (const pl of v.players) { pl.handSize = data.handSize; pl.opened = false; }
      if (data.hand && data.hand.length) v.hand = data.hand;
      else if (t.seat !== null) v.hand = [];
      v.current = data.firstSeat; v.phase = "PHASE_DRAW"; v.commitment = data.commitment; v.claim = null;
      break;
    case "EVENT_TYPE_TURN_STARTED": v.current = seat; v.phase = "PHASE_DRAW"; v.claim = null; break;
    case "EVENT_TYPE_DREW":
      p.handSize += 1; v.stockSize = data.stockSize; v.discardSize = data.discardSize;
      if (data.source === "DRAW_SOURCE_DISCARD") takeDiscard(v);
      if (mine && data.card) v.hand.push(data.card);
      v.phase = "PHASE_PLAY";
      break;
    case "EVENT_TYPE_LAID_CONTRACT":
      for (const m of data.melds || []) { v.table[m.index] = m; p.handSize -= m.cards.length; if (mine) removeFromHand(m.cards.map((c) => c.id)); }
      p.opened = true;
      break;
    case "EVENT_TYPE_LAID_OFF":
      v.table[data.meld.index] = data.meld; p.handSize -= 1; if (mine) removeFromHand([data.card.id]);
      break;
    case "EVENT_TYPE_EXTRA_MELD":
      v.table[data.meld.index] = data.meld; p.handSize -= data.meld.cards.length;
      if (mine) removeFromHand(data.meld.cards.map((c) => c.id));
      break;
    case "EVENT_TYPE_JOKER_SWAPPED":
      v.table[data.meld.index] = data.meld;
      if (mine) { removeFromHand([data.card.id]); v.hand.push(data.joker); }
      break;
    case "EVENT_TYPE_DISCARDED":
      p.handSize -= 1; v.discardTop = data.card; v.discardSize = data.discardSize; v.pile.push(data.card);
      if (mine) removeFromHand([data.card.id]);
      break;
    case "EVENT_TYPE_CLAIM_WINDOW_OPENED": v.phase = "PHASE_CLAIM"; v.claim = { card: data.card, seats: data.seats || [], discarder: seat }; break;
    case "EVENT_TYPE_CLAIM_AWARDED":
      p.handSize += 1 + num(data.penaltyCards); v.stockSize -= num(data.penaltyCards);
      v.discardSize -= 1; takeDiscard(v);
      if (mine) { v.hand.push(data.card); for (const c of data.penalty || []) v.hand.push(c); }
      break;
    case "EVENT_TYPE_CLAIM_WINDOW_CLOSED": v.claim = null; break;
    case "EVENT_TYPE_STOCK_RESHUFFLED": v.stockSize = data.cards; v.discardSize = 1; v.pile = v.discardTop ? [v.discardTop] : []; break;
    case "EVENT_TYPE_ROUND_ENDED":
      t.roundEnd = { round: data.round, reason: data.reason, penalties: data.penalties || [], scores: data.scores || [],
        left: v.players.map((pl) => pl.handSize), contract: v.contract };
      v.players.forEach((pl, i) => { pl.score = (data.scores || [])[i] ?? pl.score; });
      break;
    case "EVENT_TYPE_GAME_ENDED":
      t.gameEnd = { scores: data.scores || [], winners: data.winners || [], seed: data.seed };
      v.gameOver = true; v.phase = "PHASE_GAME_OVER";
      break;
    case "EVENT_TYPE_GAME_ABANDONED":
      t.gameEnd = { scores: data.scores || [], winners: [], seed: data.seed, abandoned: true };
      v.gameOver = true; v.abandoned = true; v.phase = "PHASE_GAME_OVER";
      break;
    default: break;
  }
}

function describeEvent(t, ev) {
  const who = ev.seat === undefined ? "" : seatName(t.game, ev.seat, t.seat);
  const data = payloadOf(ev);
  const card = (c) => (c ? cardLabel(c.code) : "a card");
  switch (ev.type) {
    case "EVENT_TYPE_ROUND_STARTED": return `Round ${data.round} of ${data.rounds} dealt: ${data.contract && data.contract.name ? data.contract.name : ""}.`;
    case "EVENT_TYPE_TURN_STARTED": return `${who}'s turn.`;
    case "EVENT_TYPE_DREW": return data.source === "DRAW_SOURCE_DISCARD" ? `${who} took ${card(data.card)} from the discard pile.` : `${who} drew from the stock${data.card ? ` (${card(data.card)})` : ""}.`;
    case "EVENT_TYPE_LAID_CONTRACT": return `${who} laid the contract.`;
    case "EVENT_TYPE_LAID_OFF": return `${who} laid off ${card(data.card)}.`;
    case "EVENT_TYPE_EXTRA_MELD": return `${who} laid another meld.`;
    case "EVENT_TYPE_JOKER_SWAPPED": return `${who} swapped ${card(data.card)} for a joker.`;
    case "EVENT_TYPE_DISCARDED": return `${who} discarded ${card(data.card)}.`;
    case "EVENT_TYPE_CLAIM_WINDOW_OPENED": return `May I? ${card(data.card)} can be claimed.`;
    case "EVENT_TYPE_CLAIM_ANSWERED": return `${who} ${data.claim ? "claims" : "passes"}.`;
    case "EVENT_TYPE_CLAIM_AWARDED": return `${who} takes ${card(data.card)} and ${num(data.penaltyCards)} penalty card(s).`;
    case "EVENT_TYPE_CLAIM_WINDOW_CLOSED": return data.winner === undefined ? "Nobody claimed it." : "";
    case "EVENT_TYPE_STOCK_EXHAUSTED": return `The stock ran out (${data.count}).`;
    case "EVENT_TYPE_STOCK_RESHUFFLED": return `The discard pile was shuffled into a new stock.`;
    case "EVENT_TYPE_ROUND_ENDED": return `Round ${data.round} is over (${reasonText(data.reason)}).`;
    case "EVENT_TYPE_GAME_ENDED": return `The game is over.`;
    case "EVENT_TYPE_GAME_ABANDONED": return `The game ended: nobody moved for too long.`;
    default: return "";
  }
}

// ------------------------------------------------------------------ the play screen

let current = null; // the open table (play or watch), closed when the route changes

function tableScreen(id, { watch = false } = {}) {
  const mine = watch ? null : stored(id);
  if (!watch && !mine) { joinScreen(id); return; }
  const t = {
    id, seat: mine ? mine.seat : null, token: mine ? mine.token : null, watch,
    game: null, view: null, prompt: null, queue: [], log: [], busy: false, closed: false,
    order: JSON.parse(sessionStorage.getItem(`glintwick.order.${id}`) || "[]"),
    sort: localStorage.getItem("glintwick.sort") || "suit", selected: null,
    roundEnd: null, gameEnd: null, lastCursor: "", receivedCursor: "", streamOver: false, lastVersion: -1, modelVersion: -1,
    abort: new AbortController(), error: "", preview: null, hint: null, connected: false,
  };
  current = t;
  const root = h("div", { class: "table" });
  t.root = root;
  screen(watch ? "Watching" : "Your table", root);
  root.append(h("p", { role: "status" }, "Connecting to the table…"));
  api.getGame(id).then((g) => {
    t.game = g;
    render(t);
    connect(t);
    if (!watch) waitForPlayers(t);
  }).catch((e) => { t.error = errorText(e); render(t); });
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
        onMessage: (kind, ident, data) => {
          const ev = t.watch ? (kind === "event" ? data : null) : data.event;
          if (ev && ev.cursor) t.receivedCursor = ev.cursor;
          // the stream is over for good once the game has ended (its session closed
          // without an error): nothing to reconnect for while the queue plays out
          if ((ev && (ev.type === "EVENT_TYPE_GAME_ENDED" || ev.type === "EVENT_TYPE_GAME_ABANDONED")) || (kind === "closed" && !(data.closed && data.closed.error))) {
            t.streamOver = true;
          }
          t.queue.push({ kind, data }); pump(t);
        },
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

// the stream's messages, one at a time: other seats' moves wait the chosen pace
async function pump(t) {
  if (t.busy) return;
  t.busy = true;
  try {
    while (t.queue.length && !t.closed) {
      const { kind, data } = t.queue.shift();
      const msg = t.watch ? (kind === "snapshot" ? { snapshot: data } : { event: data }) : data;
      if (msg.snapshot) {
        installView(t, msg.snapshot);
        t.lastVersion = num(msg.snapshot.version);
      } else if (msg.event) {
        const ev = msg.event;
        const version = num(ev.version);
        if (version !== t.lastVersion && ev.seat !== t.seat && pace() > 0 && t.view && t.modelVersion >= 0 && !["EVENT_TYPE_ROUND_STARTED"].includes(ev.type)) {
          render(t);
          await sleep(pace());
        }
        t.lastVersion = Math.max(t.lastVersion, version);
        t.lastCursor = ev.cursor;
        if (t.prompt && version > num(t.prompt.version)) t.prompt = null;
        if (t.view && version > t.modelVersion) applyEvent(t, ev);
        if (ev.type === "EVENT_TYPE_ROUND_STARTED") {
          const rs = ev.roundStarted;
          recordCommitment(t.id, rs.round, rs.commitment);
          if (rs.hand && rs.hand.length) recordDeal(t.id, rs.round, rs.hand, rs.upcard);
        }
        const text = describeEvent(t, ev);
        if (text) { t.log.push(text); if (ev.seat !== t.seat || ev.type === "EVENT_TYPE_CLAIM_AWARDED") announce(text); }
      } else if (msg.prompt) {
        if (num(msg.prompt.version) >= t.lastVersion) {
          installView(t, msg.prompt.view);
          t.prompt = msg.prompt;
          t.preview = null;
          if (msg.prompt.view.phase === "PHASE_CLAIM") announce("May I? You may claim the discard.");
          else announce("Your move.");
        }
      } else if (msg.closed) {
        if (msg.closed.error) t.error = `${msg.closed.error.reason}: ${msg.closed.error.message}`;
        t.finished = true;
      }
      if (!t.queue.length) render(t);
    }
  } finally {
    t.busy = false;
  }
  if (t.view && !t.prompt && !t.closed && t.view.discardSize > 0 && !t.view.discardTop) resync(t);
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

// the commitments this browser saw before each deal was played: the replay checks the
// revealed seed against them (a finished game's stream starts after round 1's deal)
function recordCommitment(id, round, commitment) {
  if (!commitment || !round) return;
  const key = `glintwick.commitments.${id}`;
  let seen = {};
  try { seen = JSON.parse(localStorage.getItem(key) || "{}"); } catch { seen = {}; }
  if (seen[round]) return;
  seen[round] = commitment;
  localStorage.setItem(key, JSON.stringify(seen));
}

// the seat's own dealt hand and the upcard of each round, as dealt: the replay checks
// them against the deal it recomputes from the revealed seed
function recordDeal(id, round, hand, upcard) {
  const key = `glintwick.deals.${id}`;
  let seen = {};
  try { seen = JSON.parse(localStorage.getItem(key) || "{}"); } catch { seen = {}; }
  if (seen[round]) return;
  seen[round] = { hand: hand.map((c) => c.id).sort((a, b) => a - b), upcard: upcard ? upcard.id : null };
  localStorage.setItem(key, JSON.stringify(seen));
}

function seenDeals(id) {
  try { return JSON.parse(localStorage.getItem(`glintwick.deals.${id}`) || "{}"); } catch { return {}; }
}

function seenCommitments(id) {
  try { return JSON.parse(localStorage.getItem(`glintwick.commitments.${id}`) || "{}"); } catch { return {}; }
}

function installView(t, view) {
  recordCommitment(t.id, view.round, view.commitment);
  view.players = view.players || [];
  view.table = view.table || [];
  view.hand = view.hand || [];
  const kept = t.view && t.view.pile && t.view.round === view.round ? t.view.pile : [];
  const same = view.discardTop && kept.length && kept[kept.length - 1].id === view.discardTop.id;
  view.pile = same ? kept : view.discardTop ? [view.discardTop] : [];
  t.view = view;
  t.modelVersion = num(view.version);
  if (view.gameOver && !t.gameEnd) {
    t.gameEnd = { scores: view.players.map((p) => p.score), winners: view.winners || [], seed: view.seed, abandoned: !!view.abandoned };
  }
}

function handInOrder(t) {
  const hand = t.view.hand;
  const byId = new Map(hand.map((c) => [c.id, c]));
  const kept = t.order.filter((id) => byId.has(id));
  const fresh = sortCards(hand.filter((c) => !kept.includes(c.id)), t.sort).map((c) => c.id);
  t.order = [...kept, ...fresh];
  sessionStorage.setItem(`glintwick.order.${t.id}`, JSON.stringify(t.order)); // (kept on refresh)
  return t.order.map((id) => byId.get(id));
}

function legal(t) {
  if (!t.prompt || t.acting) return [];
  return t.prompt.legalActions || [];
}

async function act(t, action, what) {
  if (!t.prompt || t.acting) return;
  t.acting = true;
  t.error = "";
  const version = t.prompt.version;
  render(t);
  try {
    await api.act(t.id, t.token, { seat: t.seat, expectedVersion: version, requestId: requestId(), action });
    // (the next prompt may have come on the stream before this answer)
    if (t.prompt && t.prompt.version === version) t.prompt = null;
    t.selected = null;
    t.preview = null;
    t.hint = null;
    announce(what);
  } catch (e) {
    t.error = errorText(e);
    if (e instanceof ApiError && e.status === 409 && t.prompt && t.prompt.version === version) t.prompt = null;
  } finally {
    t.acting = false;
    render(t);
  }
}

// ------------------------------------------------------------------ rendering

function render(t) {
  if (t !== current || t.closed) return;
  const focusedKey = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
  const parts = [];
  if (t.error) parts.push(h("p", { class: "error", role: "alert" }, t.error));
  if (!t.view || !t.game) {
    parts.push(h("p", { role: "status" }, t.error ? "" : "Connecting to the table…"));
    t.root.replaceChildren(...parts);
    return;
  }
  parts.push(contractPanel(t));
  if (!t.watch) parts.push(waitingPanel(t));
  if (t.gameEnd) parts.push(gameEndPanel(t));
  else if (t.roundEnd) parts.push(roundEndPanel(t));
  parts.push(seatsPanel(t), tablePanel(t));
  if (!t.watch) parts.push(actionsPanel(t), handPanel(t));
  parts.push(logPanel(t), linksPanel(t));
  t.root.replaceChildren(...parts.filter(Boolean));
  const log = t.root.querySelector(".log ol");
  if (log) log.scrollTop = log.scrollHeight; // the latest move in view
  const again = focusedKey ? t.root.querySelector(`[data-key="${CSS.escape(focusedKey)}"]`) : null;
  if (again) again.focus();
  else if (focusedKey || document.activeElement === document.body) {
    // the focused control went with the move: keyboard users land on the next choice
    const next = t.root.querySelector(".actions button, .round-end button");
    if (next && t.prompt) next.focus({ preventScroll: true });
  }
}

function contractPanel(t) {
  const v = t.view;
  const rules = t.game.ruleSet;
  const exact = rules.exactContractSizes;
  const contract = v.contract || { melds: [] };
  const asks = describeContract(contract, exact);
  const section = h("section", { class: "contract", "aria-labelledby": "contract-title" });
  if (v.rules === "whiskertrail") {
    section.append(
      h("h2", { id: "contract-title" }, `Stop ${v.round} of ${v.rounds} · ${contract.name}: ${asks}`),
      h("ol", { class: "route", "aria-label": "The route" }, ...(rules.contracts || []).map((c, i) => h("li", {
        class: i + 1 < v.round ? "done" : i + 1 === v.round ? "here" : "",
        "aria-current": i + 1 === v.round ? "step" : null,
      }, i + 1 < v.round ? "✓ " : "", c.name))));
  } else {
    section.append(h("h2", { id: "contract-title" }, `Round ${v.round} of ${v.rounds}: ${contract.name ? `${contract.name} — ` : ""}${asks}`));
  }
  section.append(h("p", {}, `Deal: ${contract.deal} cards${contract.discards === false ? " · no discards this round: end your turn instead" : ""}`));
  return section;
}

function waitingPanel(t) {
  const free = t.game.seatInfo.filter((s) => !s.joined).length;
  if (!free) return null;
  const link = `${location.origin}/#/join/${t.id}`;
  const strength = h("select", { id: "fill-strength", "aria-label": "Strength of the bots that fill the table" },
    ...STRENGTHS.map(([v, l]) => h("option", { value: v, selected: v === ((stored(t.id) || {}).strength || "greedy") }, l)));
  return h("section", { class: "panel waiting", "aria-labelledby": "waiting-title" },
    h("h2", { id: "waiting-title" }, `Waiting for ${free} more player(s)`),
    h("p", {}, "Share this link with friends: ", h("a", { href: link, id: "share-link" }, link)),
    h("div", { class: "buttons" }, strength,
      h("button", { type: "button", id: "fill-bots", onclick: async () => {
        try { await api.fillWithBots(t.id, strength.value, t.token); t.game = await api.getGame(t.id); render(t); } catch (e) { t.error = errorText(e); render(t); }
      } }, "Fill the empty seats with bots")));
}

function seatsPanel(t) {
  const v = t.view;
  return h("section", { class: "seats", "aria-labelledby": "seats-title" },
    h("h2", { id: "seats-title", class: "sr-only" }, "Players"),
    h("ul", {}, ...v.players.map((p, i) => {
      const turn = !v.gameOver && (v.phase === "PHASE_CLAIM" ? (v.toAct || []).includes(i) : v.current === i);
      return h("li", { class: `seat${turn ? " turn" : ""}${i === t.seat ? " me" : ""}`, "aria-current": turn && v.phase !== "PHASE_CLAIM" ? "true" : null },
        h("strong", {}, seatName(t.game, i, t.seat)),
        h("span", {}, ` · ${p.handSize} card${p.handSize === 1 ? "" : "s"}`),
        h("span", {}, ` · score ${p.score}`),
        p.opened ? h("span", {}, " · open") : null,
        turn ? h("span", { class: "badge" }, v.phase === "PHASE_CLAIM" ? " deciding" : " to play") : null);
    })));
}

function meldActions(t, meld) {
  // the lay-offs and joker swaps of the selected card onto this meld
  const out = [];
  const held = t.view.hand.find((c) => c.id === t.selected);
  const face = held ? cardFace(held.code) : "";
  for (const a of legal(t)) {
    if (a.layOff && a.layOff.meld === meld.index && a.layOff.card === t.selected) {
      const end = a.layOff.end === "RUN_END_LOW" ? " at the low end" : a.layOff.end === "RUN_END_HIGH" ? " at the high end" : "";
      out.push(h("button", { type: "button", class: "small", "data-key": `off-${meld.index}-${a.layOff.end}`, onclick: () => act(t, a, "Laid off.") },
        `Lay off ${face} here${end}`));
    }
    if (a.swapJoker && a.swapJoker.meld === meld.index && a.swapJoker.card === t.selected) {
      out.push(h("button", { type: "button", class: "small", "data-key": `swap-${meld.index}`, onclick: () => act(t, a, "Swapped the joker.") }, `Swap ${face} for the joker`));
    }
  }
  return out;
}

function tablePanel(t) {
  const v = t.view;
  const distinct = t.game.ruleSet.setDistinctSuits;
  const owners = new Map();
  for (const m of v.table) {
    if (!m) continue;
    if (!owners.has(m.owner)) owners.set(m.owner, []);
    owners.get(m.owner).push(m);
  }
  const piles = h("div", { class: "piles" },
    h("div", { class: "pile", id: "stock-pile" }, h("span", { class: "pile-name" }, "Stock"), h("span", {}, `${v.stockSize} card${v.stockSize === 1 ? "" : "s"}`)),
    h("div", { class: "pile", id: "discard-pile" }, h("span", { class: "pile-name" }, "Discard pile"),
      v.discardTop ? cardEl(v.discardTop) : h("span", {}, v.discardSize ? "(a card)" : "empty"),
      h("span", {}, `${v.discardSize} card${v.discardSize === 1 ? "" : "s"}`)));
  const melds = [...owners.entries()].sort((a, b) => a[0] - b[0]).map(([owner, list]) => h("div", { class: "owner" },
    h("h3", {}, seatName(t.game, owner, t.seat)),
    h("ul", { class: "melds" }, ...list.map((m) => {
      const stands = meldStandsFor(m, distinct);
      return h("li", { class: "meld", "data-meld": m.index, "aria-label": `meld ${m.index + 1}: ${meldTitle(m)}` },
        h("span", { class: "meld-cards" }, ...m.cards.map((c, i) => cardEl(c, { standsFor: stands[i] }))),
        ...meldActions(t, m));
    }))));
  return h("section", { class: "board", "aria-labelledby": "board-title" },
    h("h2", { id: "board-title", class: "sr-only" }, "The table"), piles,
    melds.length ? h("div", { class: "all-melds" }, ...melds) : h("p", { class: "muted" }, "No melds on the table yet."));
}

function claimPanel(t, actions) {
  const v = t.view;
  const claim = actions.find((a) => a.claim);
  const pass = actions.find((a) => a.passClaim);
  const card = v.claim && v.claim.card ? v.claim.card : v.discardTop;
  const penalty = t.game.ruleSet.claimPenaltyCards;
  const deadline = num(t.prompt.deadlineUnix);
  const countdown = h("span", { class: "countdown", id: "claim-countdown" });
  const tick = () => {
    if (!countdown.isConnected && countdown.dataset.started) return;
    countdown.dataset.started = "1";
    const left = Math.max(0, Math.ceil(deadline - Date.now() / 1000));
    countdown.textContent = deadline ? `${left} s left` : "no time limit";
    if (deadline && left > 0) setTimeout(tick, 500);
  };
  tick();
  return h("div", { class: "claim", role: "group", "aria-labelledby": "claim-title" },
    h("h3", { id: "claim-title" }, "May I?"),
    h("p", {}, "Claim ", card ? cardEl(card) : "the discard", ` out of turn? It costs ${penalty} penalty card${penalty === 1 ? "" : "s"} from the stock. `, countdown),
    h("div", { class: "buttons" },
      claim ? h("button", { type: "button", id: "claim", "data-key": "claim", onclick: () => act(t, claim, "You claimed the card.") }, "May I? Claim it") : null,
      pass ? h("button", { type: "button", id: "pass-claim", "data-key": "pass", onclick: () => act(t, pass, "You passed.") }, "Pass") : null));
}

function actionsPanel(t) {
  const v = t.view;
  const actions = legal(t);
  const section = h("section", { class: "actions", "aria-labelledby": "actions-title" });
  const waiting = v.gameOver ? "The game is over." : t.acting ? "Sending your move…" :
    v.phase === "PHASE_CLAIM" ? "A May I? window is open." : `Waiting for ${seatName(t.game, v.current, t.seat)}.`;
  const free = t.game.seatInfo.filter((s) => !s.joined).length;
  if (free && !v.gameOver) {
    // (the engine would take a move now, but nobody else could answer it yet)
    section.append(h("h2", { id: "actions-title" }, "The game starts when every seat is taken"));
    return section;
  }
  section.append(h("h2", { id: "actions-title" }, actions.length ? (v.phase === "PHASE_CLAIM" ? "Out of turn" : "Your move") : waiting));
  if (!actions.length) return section;
  if (v.phase === "PHASE_CLAIM") { section.append(claimPanel(t, actions)); return section; }
  const buttons = h("div", { class: "buttons" });
  for (const a of actions) {
    if (a.draw) {
      const fromDiscard = a.draw.source === "DRAW_SOURCE_DISCARD";
      buttons.append(h("button", { type: "button", id: fromDiscard ? "draw-discard" : "draw-stock", "data-key": fromDiscard ? "dd" : "ds",
        onclick: () => act(t, a, fromDiscard ? "You took the discard." : "You drew from the stock.") },
      fromDiscard ? `Take ${v.discardTop ? cardLabel(v.discardTop.code) : "the discard"}` : "Draw from the stock"));
    }
    if (a.layContract) {
      buttons.append(h("button", { type: "button", id: "lay-contract", "data-key": "lay", onclick: () => previewContract(t, a) }, "Lay the contract…"));
    }
    if (a.endTurn) buttons.append(h("button", { type: "button", id: "end-turn", "data-key": "end", onclick: () => act(t, a, "You ended your turn.") }, "End the turn"));
  }
  const extras = actions.filter((a) => a.extraMeld);
  extras.forEach((a, i) => {
    const codes = a.extraMeld.meld.cards.map((id) => (v.hand.find((c) => c.id === id) || { code: "?" }).code);
    buttons.append(h("button", { type: "button", class: "extra-meld", "data-key": `extra-${i}`, onclick: () => act(t, a, "You laid a meld.") },
      `Lay ${codes.map(cardFace).join(" ")}`));
  });
  if (buttons.childElementCount) section.append(buttons);
  if (t.preview) section.append(previewPanel(t));
  const sel = t.selected;
  if (sel !== null) {
    const card = v.hand.find((c) => c.id === sel);
    const discard = actions.find((a) => a.discard && a.discard.card === sel);
    const offs = actions.filter((a) => (a.layOff && a.layOff.card === sel) || (a.swapJoker && a.swapJoker.card === sel));
    section.append(h("div", { class: "selected", role: "group", "aria-label": "The selected card" },
      h("p", {}, "Selected: ", card ? cardEl(card) : "?",
        offs.length ? " — pick a meld on the table to lay it off on (or swap for its joker)." : ""),
      discard ? h("button", { type: "button", id: "discard", "data-key": "discard", onclick: () => act(t, discard, `You discarded ${cardLabel(card.code)}.`) }, `Discard ${card ? cardLabel(card.code) : ""}`) : null));
  } else if (actions.some((a) => a.discard || a.layOff || a.swapJoker)) {
    section.append(h("p", { class: "muted" }, "Select a card in your hand to discard it, lay it off or swap it for a joker."));
  }
  const hint = h("button", { type: "button", id: "hint", "data-key": "hint", onclick: () => showHint(t) }, "Hint");
  section.append(h("div", { class: "buttons" }, hint));
  if (t.hint) section.append(h("p", { id: "hint-text", role: "status" }, t.hint));
  return section;
}

function rulesOf(t) {
  const r = { ...t.game.ruleSet };
  delete r.hash;
  return r;
}

async function previewContract(t, action) {
  try {
    const answer = await api.analyse({ customRuleSet: rulesOf(t), round: t.view.round, handIds: t.view.hand.map((c) => c.id), bestOnly: true });
    t.preview = { action, melds: answer.melds || [] };
  } catch (e) {
    t.preview = { action, melds: [], error: errorText(e) };
  }
  render(t);
  const confirm = document.getElementById("confirm-contract");
  if (confirm) confirm.focus();
}

function previewPanel(t) {
  const distinct = t.game.ruleSet.setDistinctSuits;
  return h("div", { class: "preview", role: "group", "aria-labelledby": "preview-title" },
    h("h3", { id: "preview-title" }, "The contract you will lay"),
    t.preview.error ? h("p", {}, `No preview: ${t.preview.error}`) : null,
    h("ul", { class: "melds" }, ...t.preview.melds.map((m) => {
      const stands = meldStandsFor(m, distinct);
      return h("li", { class: "meld", "aria-label": meldTitle(m) }, h("span", { class: "meld-cards" }, ...m.cards.map((c, i) => cardEl(c, { standsFor: stands[i] }))));
    })),
    h("div", { class: "buttons" },
      h("button", { type: "button", id: "confirm-contract", "data-key": "confirm", onclick: () => act(t, t.preview.action, "You laid the contract.") }, "Confirm: lay these melds"),
      h("button", { type: "button", id: "cancel-contract", "data-key": "cancel", onclick: () => { t.preview = null; render(t); } }, "Cancel")));
}

async function showHint(t) {
  try {
    const a = await api.analyse({ customRuleSet: rulesOf(t), round: t.view.round, handIds: t.view.hand.map((c) => c.id) });
    if (a.feasible) t.hint = "Your hand can lay the contract now.";
    else if (a.missing === undefined) t.hint = "Your hand is far from the contract.";
    else t.hint = `You lack ${a.missing} card(s). These would help: ${(a.outs || []).map(cardFace).join(" ") || "none"}.`;
  } catch (e) {
    t.hint = `No hint: ${errorText(e)}`;
  }
  render(t);
}

function handPanel(t) {
  const v = t.view;
  const cards = handInOrder(t);
  const moves = new Map(); // card id -> the kinds of move it has now
  for (const a of legal(t)) {
    for (const k of ["discard", "layOff", "swapJoker"]) {
      if (!a[k]) continue;
      if (!moves.has(a[k].card)) moves.set(a[k].card, new Set());
      moves.get(a[k].card).add(k);
    }
  }
  const move = (id, by) => {
    const i = t.order.indexOf(id);
    const j = i + by;
    if (i < 0 || j < 0 || j >= t.order.length) return;
    [t.order[i], t.order[j]] = [t.order[j], t.order[i]];
    render(t);
  };
  const list = h("ul", { class: "hand", "aria-label": `Your hand, ${cards.length} cards` }, ...cards.map((c, i) => {
    const can = moves.has(c.id);

    const button = h("button", {
      type: "button", class: `card${isRed(c.code) ? " red" : ""}${isJoker(c.code) ? " joker" : ""}${t.selected === c.id ? " chosen" : ""}`,
      "aria-pressed": t.selected === c.id ? "true" : "false", "data-key": `card-${c.id}`, "data-card": c.id, "data-code": c.code, "data-moves": can ? [...moves.get(c.id)].join(" ") : "",
      "aria-disabled": can ? null : "true", draggable: "true",
      onclick: () => { if (!can) return; t.selected = t.selected === c.id ? null : c.id; render(t); },
      onkeydown: (e) => {
        if (e.altKey && e.key === "ArrowLeft") { e.preventDefault(); move(c.id, -1); }
        if (e.altKey && e.key === "ArrowRight") { e.preventDefault(); move(c.id, 1); }
      },
      ondragstart: (e) => { e.dataTransfer.setData("text/plain", String(c.id)); },
      ondragover: (e) => e.preventDefault(),
      ondrop: (e) => {
        e.preventDefault();
        const from = t.order.indexOf(Number(e.dataTransfer.getData("text/plain")));
        if (from < 0) return;
        const [id] = t.order.splice(from, 1);
        t.order.splice(i, 0, id);
        render(t);
      },
    }, h("span", { "aria-hidden": "true" }, cardFace(c.code)), h("span", { class: "sr-only" }, cardLabel(c.code)));
    return h("li", {}, button);
  }));
  const sorter = (mode, text) => h("button", { type: "button", id: `sort-${mode}`, "data-key": `sort-${mode}`, "aria-pressed": t.sort === mode ? "true" : "false",
    onclick: () => { t.sort = mode; localStorage.setItem("glintwick.sort", mode); t.order = sortCards(v.hand, mode).map((c) => c.id); render(t); } }, text);
  return h("section", { class: "my-hand", "aria-labelledby": "hand-title" },
    h("h2", { id: "hand-title" }, "Your hand"),
    h("div", { class: "buttons" }, sorter("suit", "Sort by suit"), sorter("rank", "Sort by rank"),
      h("span", { class: "muted" }, "Drag a card, or Alt+←/→ on it, to move it.")),
    list);
}

function scoreTable(t, caption, rows) {
  return h("table", { class: "scores" }, h("caption", {}, caption),
    h("thead", {}, h("tr", {}, ...rows.head.map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {}, ...rows.body.map((r) => h("tr", {}, h("th", { scope: "row" }, r[0]), ...r.slice(1).map((x) => h("td", {}, x))))));
}

function roundEndPanel(t) {
  const r = t.roundEnd;
  const body = r.scores.map((s, i) => [seatName(t.game, i, t.seat), r.left[i], r.penalties[i] ?? 0, s]);
  return h("section", { class: "panel round-end", id: "round-end", "aria-labelledby": "round-end-title" },
    h("h2", { id: "round-end-title" }, `Round ${r.round} is over (${reasonText(r.reason)})`),
    scoreTable(t, "Scores after the round", { head: ["Player", "Cards left", "Penalty", "Total"], body }),
    h("button", { type: "button", id: "continue", onclick: () => { t.roundEnd = null; render(t); } }, "Continue"));
}

function gameEndPanel(t) {
  const g = t.gameEnd;
  const winners = g.winners.map((w) => seatName(t.game, w, t.seat));
  const body = g.scores.map((s, i) => [seatName(t.game, i, t.seat), s, g.winners.includes(i) ? "winner" : ""]);
  // (an abandoned game has no winner: nobody moved for the server's idle limit)
  const title = g.abandoned ? "Game over: abandoned, nobody moved for too long (no winner)"
    : `Game over: ${winners.join(" and ")} ${winners.length > 1 ? "share the win" : "wins"}`;
  return h("section", { class: "panel game-end", id: "game-end", "aria-labelledby": "game-end-title" },
    h("h2", { id: "game-end-title" }, title),
    t.roundEnd ? scoreTable(t, `Round ${t.roundEnd.round} (${reasonText(t.roundEnd.reason)})`, {
      head: ["Player", "Cards left", "Penalty", "Total"],
      body: t.roundEnd.scores.map((s, i) => [seatName(t.game, i, t.seat), t.roundEnd.left[i], t.roundEnd.penalties[i] ?? 0, s]),
    }) : null,
    scoreTable(t, g.abandoned ? "Scores of the rounds played" : "Final scores", { head: ["Player", "Score", ""], body }),
    h("p", {}, h("a", { href: `#/replay/${t.id}`, id: "replay-link" }, "Replay the game and check its deals"), " · ", h("a", { href: "#/" }, "New game")));
}

function logPanel(t) {
  return h("section", { class: "log", "aria-labelledby": "log-title" },
    h("h2", { id: "log-title" }, "What happened"),
    h("ol", { tabindex: "0", "aria-label": "Every move so far, the latest last" }, ...t.log.map((line) => h("li", {}, line))));
}

function linksPanel(t) {
  const watch = `${location.origin}/#/watch/${t.id}`;
  return h("p", { class: "links" }, "Spectator link: ", h("a", { href: watch, id: "watch-link" }, watch),
    t.connected ? "" : " · reconnecting…");
}

// ------------------------------------------------------------------ replay

async function replayScreen(id) {
  screen("Replay", h("p", { role: "status" }, "Loading the replay…"));
  let replay;
  const events = [];
  try {
    replay = await api.replay(id);
    // every public event after round 1's deal (the event at cursor 0.0)
    await readSse(`/v1/games/${id}:watch?after=0.0`, { onMessage: (kind, _id, data) => { if (kind === "event") events.push(data); } });
  } catch (e) {
    screen("Replay", h("section", { class: "panel" }, h("h1", {}, "No replay"), h("p", {}, errorText(e))));
    return;
  }
  const game = replay.game;
  const seen = seenCommitments(id);
  const rounds = Object.entries(seen).map(([round, commitment]) => ({ round: Number(round), commitment, seenHere: true }));
  for (const ev of events) {
    if (ev.type === "EVENT_TYPE_ROUND_STARTED") {
      const known = rounds.find((x) => x.round === ev.roundStarted.round);
      if (known) known.commitment = known.commitment === ev.roundStarted.commitment ? known.commitment : "differs from what this browser saw";
      else rounds.push({ round: ev.roundStarted.round, commitment: ev.roundStarted.commitment });
    }
    if (ev.type === "EVENT_TYPE_ROUND_ENDED") {
      const r = rounds.find((x) => x.round === ev.roundEnded.round);
      if (r) r.revealed = ev.roundEnded.roundSeed;
    }
  }
  rounds.sort((a, b) => a.round - b.round);
  const verdicts = await verifyRounds(replay.seed, rounds);
  const deals = await checkDeals(id, game, replay, events);
  const unseen = [];
  for (let r = 1; r <= game.ruleSet.contracts.length; r++) if (!rounds.some((x) => x.round === r)) unseen.push(r);
  const allOk = verdicts.length > 0 && verdicts.every((v) => v.ok);
  const steps = replay.steps || [];
  const byVersion = new Map();
  for (const ev of events) {
    const v = num(ev.version);
    if (!byVersion.has(v)) byVersion.set(v, []);
    byVersion.get(v).push(ev);
  }
  // the public table after each move: round 1's deal as the rules make it (its upcard
  // recomputed from the seed), then every public event applied (as the play screen does)
  const t = { game, seat: null, view: null };
  const rules = game.ruleSet;
  const first = rules.contracts[0];
  const upcard = await replayUpcard(game, replay.seed);
  const size = num(rules.decks) * 52 + num(rules.jokers);
  const dealt = game.seats * num(first.deal);
  t.view = {
    rules: rules.name, seats: game.seats, round: 1, rounds: rules.contracts.length, contract: first,
    players: Array.from({ length: game.seats }, () => ({ handSize: 0, opened: false, score: 0 })),
    table: [], hand: [], phase: "PHASE_DRAW", current: 0, toAct: [],
  };
  applyEvent(t, { type: "EVENT_TYPE_ROUND_STARTED", roundStarted: {
    round: 1, rounds: rules.contracts.length, contract: first, firstSeat: 0, handSize: num(first.deal),
    stockSize: size - dealt - (rules.initialUpcard ? 1 : 0), upcard } });
  if (rules.initialUpcard && !upcard) t.view.discardSize = 1;
  const states = [structuredClone(t.view)];
  for (let v = 1; v <= steps.length; v++) {
    for (const ev of byVersion.get(v) || []) applyEvent(t, ev);
    states.push(structuredClone(t.view));
  }
  let at = 0;
  const stepView = h("div", { id: "replay-step", "aria-live": "polite" });
  const show = () => {
    const step = steps[at - 1];
    const evs = byVersion.get(at) || [];
    t.view = states[at];
    stepView.replaceChildren(
      h("h2", {}, at === 0 ? "The deal" : `Move ${at} of ${steps.length}: ${seatName(game, step.seat, null)}${step.byDeadline ? " (by deadline)" : ""}`),
      h("ul", {}, ...evs.map((ev) => describeEvent(t, ev)).filter(Boolean).map((x) => h("li", {}, x))),
      contractPanel(t), seatsPanel(t), tablePanel(t));
  };
  const go = (n) => { at = Math.max(0, Math.min(steps.length, n)); show(); };
  show();
  screen("Replay",
    h("section", { class: "panel", "aria-labelledby": "replay-title" },
      h("h1", { id: "replay-title" }, `Replay of ${game.ruleSet.name} table ${id.slice(0, 6)}`),
      h("p", { id: "fairness", class: allOk ? "ok" : "error", role: "status" },
        allOk ? `Fair deal verified: this browser recomputed ${verdicts.length} round commitment(s) from the revealed seed with SHA-256, and each matches.`
          : "The deal could NOT be verified: a commitment does not match the revealed seed."),
      h("p", { id: "deal-check", class: deals.ok ? "ok" : deals.checked ? "error" : "muted" }, deals.text),
      unseen.length ? h("p", { class: "muted" }, `Not checked: round ${unseen.join(", ")} (its commitment was dealt before this browser watched; open the replay from the browser that played it).`) : null,
      h("details", {}, h("summary", {}, "The commitments"),
        h("ul", {}, ...verdicts.map((v) => h("li", {}, `Round ${v.round}: ${v.ok ? "✓" : "✗"} ${v.commitment.slice(0, 16)}…`)))),
      scoreTable(t, "Final scores", { head: ["Player", "Score"], body: (replay.scores || []).map((s, i) => [seatName(game, i, null), s]) }),
      h("div", { class: "buttons", role: "group", "aria-label": "Step through the game" },
        h("button", { type: "button", id: "replay-first", onclick: () => go(0) }, "First"),
        h("button", { type: "button", id: "replay-prev", onclick: () => go(at - 1) }, "◀ Previous"),
        h("button", { type: "button", id: "replay-next", onclick: () => go(at + 1) }, "Next ▶"),
        h("button", { type: "button", id: "replay-last", onclick: () => go(steps.length) }, "Last")),
      stepView));
}

function codeOf(id, decks) {
  if (id >= decks * 52) return "JK";
  const n = id % 52;
  return `${"A23456789TJQK"[n % 13]}${"CDHS"[Math.floor(n / 13)]}`;
}

// round 1's upcard, recomputed from the seed (a finished game's stream starts after it)
async function replayUpcard(game, seed) {
  const rules = game.ruleSet;
  if (!rules.initialUpcard || game.arranged) return null;
  const size = num(rules.decks) * 52 + num(rules.jokers);
  const deck = await shuffledDeck(await roundSeed(seed, 1), 0, size);
  const id = dealFrom(deck, game.seats, 1, num(rules.contracts[0].deal), true).upcard;
  return { id, code: codeOf(id, num(rules.decks)) };
}

// Recompute every round's deal from the revealed seed (docs/SHUFFLE.md) and compare it
// with what this browser was dealt (its seat's hand, the upcard) and with the upcards
// of the public round_started events.
async function checkDeals(id, game, replay, events) {
  if (game.arranged) return { ok: false, checked: 0, text: "This game was dealt from arranged decks: there is no shuffle to check." };
  const rules = game.ruleSet;
  const size = num(rules.decks) * 52 + num(rules.jokers);
  const dealt = seenDeals(id);
  const mine = stored(id);
  const upcards = {};
  for (const ev of events) if (ev.type === "EVENT_TYPE_ROUND_STARTED" && ev.roundStarted.upcard) upcards[ev.roundStarted.round] = ev.roundStarted.upcard.id;
  const played = new Set(events.filter((e) => e.type === "EVENT_TYPE_ROUND_STARTED").map((e) => e.roundStarted.round));
  if (Object.keys(dealt).length) played.add(1);
  let checked = 0;
  const bad = [];
  for (const round of [...played].sort((a, b) => a - b)) {
    const contract = rules.contracts[round - 1];
    const deck = await shuffledDeck(await roundSeed(replay.seed, round), 0, size);
    const deal = dealFrom(deck, game.seats, round, num(contract.deal), rules.initialUpcard);
    const seen = dealt[round];
    if (seen && mine) {
      checked += 1;
      const hand = [...deal.hands[mine.seat]].sort((a, b) => a - b);
      if (JSON.stringify(hand) !== JSON.stringify(seen.hand)) bad.push(`round ${round}: your hand`);
      if (seen.upcard !== null && seen.upcard !== deal.upcard) bad.push(`round ${round}: the upcard`);
    }
    if (upcards[round] !== undefined) {
      checked += 1;
      if (upcards[round] !== deal.upcard) bad.push(`round ${round}: the upcard`);
    }
  }
  if (bad.length) return { ok: false, checked, text: `The recomputed deal does NOT match: ${bad.join(", ")}.` };
  if (!checked) return { ok: false, checked, text: "No deal this browser saw to compare with the recomputed shuffle." };
  return { ok: true, checked, text: `Deals recomputed from the seed: ${mine && Object.keys(dealt).length ? "your dealt hands and " : ""}the upcards match (${checked} check(s)).` };
}

// ------------------------------------------------------------------ routing

function route() {
  if (current) { current.closed = true; current.abort.abort(); current = null; }
  $app.focus({ preventScroll: true });
  const [, what, id] = (location.hash.replace(/^#\/?/, "/") || "/").split("/");
  if (what === "game" && id) tableScreen(id);
  else if (what === "watch" && id) tableScreen(id, { watch: true });
  else if (what === "join" && id) joinScreen(id);
  else if (what === "replay" && id) replayScreen(id);
  else if (what === "lobby") screen("Lobby", lobbyPanel(null));
  else startScreen();
}

window.addEventListener("hashchange", route);
route();
