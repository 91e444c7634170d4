// The table as the page keeps it: the last full view (a snapshot or a prompt's) with the
// public events after it applied, and each event told in a sentence for people.

import { cardLabel } from "./cards.js";
import { capital, num, plural, seatName } from "./dom.js";

// An event's payload: the member its type names (EVENT_TYPE_ROUND_STARTED: roundStarted).
export function payloadOf(ev) {
  const key = ev.type.slice("EVENT_TYPE_".length).toLowerCase().replace(/_(\w)/g, (_, c) => c.toUpperCase());
  return ev[key] || {};
}

// "Round" in contract rummy, "Stop" on the whiskertrail route
export const roundWord = (rules) => (rules === "whiskertrail" ? "Stop" : "Round");

// why a round ended (RoundEndReason), for people; a reason this page does not know yet
// is told by its name ("ROUND_END_REASON_SOME_THING": "some thing")
const ROUND_END_REASONS = {
  ROUND_END_REASON_EXHAUSTIONS: "the stock ran out too many times",
  ROUND_END_REASON_TURN_CAP: "it reached the turn limit",
  ROUND_END_REASON_DRY: "the stock and the discard pile ran dry",
  ROUND_END_REASON_DEAD: "nobody could go out any more (every contract laid, every meld full)",
};
export function reasonText(reason, who) {
  if (reason === "ROUND_END_REASON_WENT_OUT") return who ? `${who} went out` : "a player went out";
  return ROUND_END_REASONS[reason] || String(reason || "").replace(/^ROUND_END_REASON_/, "").toLowerCase().replace(/_/g, " ");
}

function takeDiscard(v) {
  v.pile.pop();
  v.discardTop = v.pile.length ? v.pile[v.pile.length - 1] : null;
}

// apply one public event to the page's copy of the table (t.view)
export function applyEvent(t, ev) {
  const v = t.view;
  const seat = ev.seat;
  const p = seat === undefined ? null : v.players[seat];
  const mine = seat !== undefined && seat === t.seat;
  const removeFromHand = (ids) => { v.hand = v.hand.filter((c) => !ids.includes(c.id)); };
  const data = payloadOf(ev);
  v.lastMove = { seat, type: ev.type, version: num(ev.version) };
  switch (ev.type) {
    case "EVENT_TYPE_ROUND_STARTED":
      v.round = data.round; v.rounds = data.rounds; v.contract = data.contract; v.table = [];
      v.discardTop = data.upcard || null; v.discardSize = data.upcard ? 1 : 0; v.stockSize = data.stockSize;
      v.pile = data.upcard ? [data.upcard] : [];
      for (const pl of v.players) { pl.handSize = data.handSize; pl.opened = false; }
      if (data.hand && data.hand.length) v.hand = data.hand;
      else if (t.seat !== null) v.hand = [];
      v.current = data.firstSeat; v.phase = "PHASE_DRAW"; v.commitment = data.commitment; v.claim = null;
      v.turnsCompleted = 0; v.takenFromDiscard = null; v.hasDrawn = false;
      break;
    case "EVENT_TYPE_TURN_STARTED": v.current = seat; v.phase = "PHASE_DRAW"; v.claim = null; v.takenFromDiscard = null; v.hasDrawn = false; break;
    case "EVENT_TYPE_TURN_ENDED": v.turnsCompleted = num(data.turnsCompleted); break;
    case "EVENT_TYPE_DREW":
      p.handSize += 1; v.stockSize = data.stockSize; v.discardSize = data.discardSize;
      if (data.source === "DRAW_SOURCE_DISCARD") { takeDiscard(v); if (mine) v.takenFromDiscard = data.card; }
      if (mine && data.card) v.hand.push(data.card);
      if (mine && data.card) v.drawn = data.card.id;
      v.phase = "PHASE_PLAY"; v.hasDrawn = true;
      break;
    case "EVENT_TYPE_LAID_CONTRACT":
      for (const m of data.melds || []) { v.table[m.index] = m; p.handSize -= m.cards.length; if (mine) removeFromHand(m.cards.map((c) => c.id)); }
      p.opened = true;
      v.lastMove.melds = (data.melds || []).map((m) => m.index);
      break;
    case "EVENT_TYPE_LAID_OFF":
      v.table[data.meld.index] = data.meld; p.handSize -= 1; if (mine) removeFromHand([data.card.id]);
      v.lastMove.melds = [data.meld.index];
      break;
    case "EVENT_TYPE_EXTRA_MELD":
      v.table[data.meld.index] = data.meld; p.handSize -= data.meld.cards.length;
      if (mine) removeFromHand(data.meld.cards.map((c) => c.id));
      v.lastMove.melds = [data.meld.index];
      break;
    case "EVENT_TYPE_JOKER_SWAPPED":
      v.table[data.meld.index] = data.meld;
      if (mine) { removeFromHand([data.card.id]); v.hand.push(data.joker); }
      v.lastMove.melds = [data.meld.index];
      break;
    case "EVENT_TYPE_DISCARDED":
      p.handSize -= 1; v.discardTop = data.card; v.discardSize = data.discardSize; v.pile.push(data.card);
      if (mine) removeFromHand([data.card.id]);
      break;
    case "EVENT_TYPE_CLAIM_WINDOW_OPENED":
      v.phase = "PHASE_CLAIM";
      // (the shape of View.claim: the answers in priority order, none given yet)
      v.claim = { card: data.card, discarder: seat, answers: (data.seats || []).map((s) => ({ seat: s })) };
      break;
    case "EVENT_TYPE_CLAIM_ANSWERED":
      for (const a of (v.claim && v.claim.answers) || []) {
        if (a.seat === seat) a.answer = data.claim ? "CLAIM_ANSWER_CLAIM" : "CLAIM_ANSWER_PASS";
      }
      break;
    case "EVENT_TYPE_CLAIM_AWARDED":
      p.handSize += 1 + num(data.penaltyCards); v.stockSize -= num(data.penaltyCards);
      v.discardSize -= 1; takeDiscard(v);
      if (mine) { v.hand.push(data.card); for (const c of data.penalty || []) v.hand.push(c); }
      break;
    case "EVENT_TYPE_CLAIM_WINDOW_CLOSED": v.claim = null; if (v.phase === "PHASE_CLAIM") v.phase = "PHASE_DRAW"; break;
    case "EVENT_TYPE_STOCK_RESHUFFLED": v.stockSize = data.cards; v.discardSize = 1; v.pile = v.discardTop ? [v.discardTop] : []; break;
    case "EVENT_TYPE_ROUND_ENDED":
      t.roundEnd = {
        round: data.round, reason: data.reason, penalties: data.penalties || [], scores: data.scores || [],
        left: v.players.map((pl) => pl.handSize), contract: v.contract, wentOut: seat,
      };
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

// one event in a sentence ("" for those the log does not tell)
export function describeEvent(t, ev) {
  const you = ev.seat !== undefined && ev.seat === t.seat;
  const who = ev.seat === undefined ? "" : capital(seatName(t.game, ev.seat, t.seat, { you: true }));
  const data = payloadOf(ev);
  const card = (c) => (c ? cardLabel(c.code) : "a card");
  const word = roundWord(t.view && t.view.rules);
  switch (ev.type) {
    case "EVENT_TYPE_ROUND_STARTED": return `${word} ${data.round} of ${data.rounds} dealt${data.contract && data.contract.name ? `: ${data.contract.name}` : ""}.`;
    case "EVENT_TYPE_TURN_STARTED": return you ? "Your turn." : `${who}'s turn.`;
    case "EVENT_TYPE_DREW": return data.source === "DRAW_SOURCE_DISCARD" ? `${who} took ${card(data.card)} from the discard pile.` : `${who} drew from the stock${data.card ? ` (${card(data.card)})` : ""}.`;
    case "EVENT_TYPE_LAID_CONTRACT": return `${who} laid the contract.`;
    case "EVENT_TYPE_LAID_OFF": return `${who} laid off ${card(data.card)}.`;
    case "EVENT_TYPE_EXTRA_MELD": return `${who} laid another meld.`;
    case "EVENT_TYPE_JOKER_SWAPPED": return `${who} swapped ${card(data.card)} for a joker.`;
    case "EVENT_TYPE_DISCARDED": return `${who} discarded ${card(data.card)}.`;
    case "EVENT_TYPE_CLAIM_WINDOW_OPENED": return `May I? ${capital(card(data.card))} can be claimed.`;
    case "EVENT_TYPE_CLAIM_ANSWERED": return data.claim ? `${who} ${you ? "claim" : "claims"} it.` : "";
    case "EVENT_TYPE_CLAIM_AWARDED": return `${who} ${you ? "take" : "takes"} ${card(data.card)} and ${plural(num(data.penaltyCards), "penalty card")}.`;
    case "EVENT_TYPE_CLAIM_WINDOW_CLOSED": return data.winner === undefined ? "Nobody claimed it." : "";
    case "EVENT_TYPE_STOCK_EXHAUSTED": return "The stock ran out.";
    case "EVENT_TYPE_STOCK_RESHUFFLED": return "The discard pile was shuffled into a new stock.";
    case "EVENT_TYPE_ROUND_ENDED": return `${word} ${data.round} is over: ${reasonText(data.reason, who)}.`;
    case "EVENT_TYPE_GAME_ENDED": return "The game is over.";
    case "EVENT_TYPE_GAME_ABANDONED": return "The game ended: nobody moved for too long.";
    default: return "";
  }
}
