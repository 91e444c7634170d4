// What this browser saw dealt, kept in localStorage for the replay's fairness check
// (docs/SHUFFLE.md): each round's commitment before its cards moved, the seat's own
// dealt hand and the upcard.

import { readJson } from "./dom.js";

export function recordCommitment(id, round, commitment) {
  if (!commitment || !round) return;
  const key = `glintwick.commitments.${id}`;
  const seen = readJson(localStorage, key, {});
  if (seen[round]) return;
  seen[round] = commitment;
  localStorage.setItem(key, JSON.stringify(seen));
}

export function recordDeal(id, round, hand, upcard) {
  const key = `glintwick.deals.${id}`;
  const seen = readJson(localStorage, key, {});
  if (seen[round]) return;
  seen[round] = { hand: hand.map((c) => c.id).sort((a, b) => a - b), upcard: upcard ? upcard.id : null };
  localStorage.setItem(key, JSON.stringify(seen));
}

export const seenDeals = (id) => readJson(localStorage, `glintwick.deals.${id}`, {});
export const seenCommitments = (id) => readJson(localStorage, `glintwick.commitments.${id}`, {});
