// The replay of a finished game (#/replay/ID): GetReplay and the public events, stepped
// move by move or round by round, the table after each move; the deals checked from the
// revealed seed (fair.js) against what this browser saw dealt (records.js).

import { api, readSse } from "./api.js";
import { errorText, h, num, seatName, stored } from "./dom.js";
import { scoreTable } from "./ends.js";
import { dealFrom, roundSeed, shuffledDeck, verifyRounds } from "./fair.js";
import { applyEvent, describeEvent } from "./model.js";
import { replayTable } from "./panels.js";
import { seenCommitments, seenDeals } from "./records.js";

export async function replayScreen(screen, id) {
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
  const t = { game, seat: null, view: null, watch: true };
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
  // the first move of each round after the first (a round starts with a version's events)
  const roundStarts = [...byVersion.entries()].filter(([, evs]) => evs.some((e) => e.type === "EVENT_TYPE_ROUND_STARTED")).map(([v]) => v).sort((a, b) => a - b);
  const slider = h("input", { type: "range", id: "replay-slider", min: "0", max: String(steps.length), value: "0",
    oninput: (e) => go(Number(e.target.value)) });
  const stepView = h("div", { id: "replay-step", "aria-live": "polite" });
  const show = () => {
    const step = steps[at - 1];
    const evs = byVersion.get(at) || [];
    t.view = states[at];
    stepView.replaceChildren(
      h("h2", {}, at === 0 ? "The deal" : `Move ${at} of ${steps.length}: ${seatName(game, step.seat, null)}${step.byDeadline ? " (by deadline)" : ""}`),
      h("ul", {}, ...evs.map((ev) => describeEvent(t, ev)).filter(Boolean).map((x) => h("li", {}, x))),
      ...replayTable(t));
    slider.value = String(at);
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
      scoreTable("Final scores", ["Player", "Score"], (replay.scores || []).map((s, i) => [seatName(game, i, null), String(s)])),
      h("div", { class: "buttons", role: "group", "aria-label": "Step through the game" },
        h("button", { type: "button", id: "replay-first", onclick: () => go(0) }, "First"),
        h("button", { type: "button", id: "replay-prev", onclick: () => go(at - 1) }, "◀ Previous"),
        h("button", { type: "button", id: "replay-next", onclick: () => go(at + 1) }, "Next ▶"),
        h("button", { type: "button", id: "replay-last", onclick: () => go(steps.length) }, "Last")),
      h("div", { class: "buttons", role: "group", "aria-label": "Jump a round" },
        h("button", { type: "button", id: "replay-prev-round", onclick: () => go([...roundStarts].reverse().find((x) => x < at) ?? 0) }, "◀◀ Previous round"),
        h("button", { type: "button", id: "replay-next-round", onclick: () => go(roundStarts.find((x) => x > at) ?? steps.length) }, "Next round ▶▶"),
        h("label", { for: "replay-slider" }, "Move"), slider),
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

