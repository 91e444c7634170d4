// A round's end (its scores, held until "Next round"), the game's end (standings ranked,
// the per-round score sheet, "Play again") and the short rules of each rule set.

import { readSse } from "./api.js";
import { capital, h, num, seatName } from "./dom.js";
import { applyEvent, reasonText, roundWord } from "./model.js";

export function scoreTable(caption, head, body, id) {
  return h("table", { class: "scores", id },
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, ...head.map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {}, ...body.map((r) => h("tr", {}, h("th", { scope: "row" }, r[0]), ...r.slice(1).map((x) => h("td", {}, x))))));
}

function roundTitle(t, r) {
  const who = r.wentOut === undefined ? "" : capital(seatName(t.game, r.wentOut, t.seat, { you: true }));
  return `${roundWord(t.view.rules)} ${r.round} is over: ${reasonText(r.reason, who)}`;
}

export function roundEndPanel(t) {
  const r = t.roundEnd;
  const body = r.scores.map((score, i) => [seatName(t.game, i, t.seat), r.left[i], r.penalties[i] ?? 0, score]);
  const last = r.round >= Number(t.view.rounds || 0);
  return h("section", { class: "panel round-end", id: "round-end", "aria-labelledby": "round-end-title" },
    h("h2", { id: "round-end-title" }, roundTitle(t, r)),
    scoreTable(`Scores after ${roundWord(t.view.rules).toLowerCase()} ${r.round}`, ["Player", "Cards left", "Points this round", "Total"], body),
    t.paused || !last ? h("button", { type: "button", id: "continue", "data-first": "", onclick: () => t.nextRound() },
      `Next ${roundWord(t.view.rules).toLowerCase()}`) : null);
}

// The round summaries up to round `upTo`, rebuilt from the public API alone (a page that
// kept none, e.g. reloaded in another tab): the watch stream's events from round 1's
// deal (cursor 0.0) applied to a public table, each round's end as the play screen
// records it (who went out, why, cards left, points, totals). The stream of a running
// game stays open: it is closed once round `upTo` has ended.
export async function rebuildRoundEnds(game, id, upTo) {
  const rules = game.ruleSet;
  const deal = num((rules.contracts[0] || {}).deal);
  const t = { game, seat: null, watch: true, roundEnd: null, view: {
    rules: rules.name, round: 1, rounds: rules.contracts.length, contract: rules.contracts[0],
    players: Array.from({ length: game.seats }, () => ({ handSize: deal, opened: false, score: 0 })),
    table: [], hand: [], pile: [], phase: "PHASE_DRAW" } };
  const found = [];
  const stop = new AbortController();
  try {
    await readSse(`/v1/games/${id}:watch?after=0.0`, { signal: stop.signal, onMessage: (kind, _id, ev) => {
      if (kind !== "event" || found.length >= upTo) return;
      applyEvent(t, ev);
      if (ev.type === "EVENT_TYPE_ROUND_ENDED") {
        found.push(t.roundEnd);
        if (found.length >= upTo) stop.abort();
      }
    } });
  } catch (e) {
    if (!stop.signal.aborted) throw e;
  }
  return found;
}

// ranks by score, lowest first; tied players share a rank ("1", "1", "3")
export function standings(scores) {
  const order = scores.map((s, i) => [s, i]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return order.map(([score, seat]) => ({ seat, score, rank: 1 + order.findIndex(([s]) => s === score) }));
}

export function gameEndPanel(t) {
  const g = t.gameEnd;
  const winners = g.winners.map((w) => capital(seatName(t.game, w, t.seat, { you: true })));
  const title = g.abandoned ? "Game over: abandoned, nobody moved for too long (no winner)"
    : `Game over: ${winners.join(" and ")} ${winners.length > 1 ? "share the win" : winners[0] === "You" ? "win" : "wins"}`;
  const ranked = standings(g.scores);
  const rounds = t.rounds || [];
  const word = roundWord(t.view.rules);
  const short = word === "Stop" ? "S" : "R";
  // each round's points per player (the cumulative scores' differences)
  const points = (r, seat) => {
    const before = rounds.find((x) => x.round === r.round - 1);
    return r.penalties[seat] ?? (r.scores[seat] - (before ? before.scores[seat] : 0));
  };
  return h("section", { class: "panel game-end", id: "game-end", "aria-labelledby": "game-end-title" },
    h("h2", { id: "game-end-title" }, title),
    scoreTable(g.abandoned ? "Scores of the rounds played (lowest first)" : "Final standings (lowest score wins)",
      ["Player", "Place", ...rounds.map((r) => h("abbr", { title: `${word} ${r.round}` }, `${short}${r.round}`)), "Total"],
      ranked.map(({ seat, score, rank }) => [
        seatName(t.game, seat, t.seat) + (g.winners.includes(seat) ? " 🏆" : ""), String(rank),
        ...rounds.map((r) => String(points(r, seat))), String(score),
      ]), "standings"),
    rounds.length ? h("details", { class: "round-notes" }, h("summary", {}, `How each ${word.toLowerCase()} ended`),
      h("ul", {}, ...rounds.map((r) => h("li", {}, `${roundTitle(t, r)}.`)))) : null,
    h("div", { class: "buttons" },
      h("a", { class: "button", href: `#/again/${t.id}`, id: "play-again", "data-first": "" }, "Play again"),
      h("a", { href: `#/replay/${t.id}`, id: "replay-link" }, "Replay the game and check its deals"),
      h("a", { href: "#/" }, "New game")));
}

const RULES = {
  contract: [
    "Seven rounds; each deals 10 or 12 cards and asks a contract: groups (3–4 cards of a rank, suits distinct) and sequences (4+ cards of a suit in order).",
    "Your turn: draw from the stock, lay the whole contract at once when you can, then lay off cards on any meld, swap a joker out of a run with the card it stands for, and discard.",
    "May I?: after each discard, any other seat may claim it out of turn and takes one penalty card from the stock with it; the first claimant after the discarder wins it.",
    "Round 7 has no discards: end your turn instead. A round ends when someone empties their hand, or at once when nobody can any more (every contract laid, every meld full).",
    "Cards left in hand count against you (2–10 face value, J Q K 10, ace 15, joker 15); the lowest total after seven rounds wins.",
  ],
  whiskertrail: [
    "Eight stops on a route; each asks a contract of sets (cards of a rank) and runs (cards of a suit in order) of exactly the stated sizes.",
    "Your turn: draw from the stock or take the discard, lay the whole contract at once when you can, then lay off natural cards and lay extra melds, and discard.",
    "You may not discard the very card you took from the discard pile this turn.",
    "A stop ends when someone empties their hand, or after the stock runs out a third time.",
    "Cards left in hand count against you (2–10 face value, J Q K 10, ace 15, joker 25); the lowest total at the last stop wins.",
  ],
};

export function rulesPanel(t) {
  const lines = RULES[t.view.rules] || RULES[t.game.ruleSet.name];
  if (!lines) return null;
  return h("details", { class: "rules" }, h("summary", {}, `The rules in short (${t.view.rules})`),
    h("ul", {}, ...lines.map((line) => h("li", {}, line))));
}
