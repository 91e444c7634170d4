// The contract's progress as the person reads it: for each requirement ("2 groups"),
// how many of them the hand holds now, all at once (no card in two melds), computed
// here from the hand and the rule set (docs/RULES.md, "Melds"): "2 groups: you have 1".

import { isJoker, rankOf, suitOf, SUITS } from "./cards.js";

const SUIT_CODES = Object.keys(SUITS);

// the most requirements the hand fills at once: a small exact search over the melds
// each requirement could take (bounded: past BUDGET nodes the best found so far stands)
const BUDGET = 60000;

function rulesOf(rules) {
  return {
    distinct: !!rules.setDistinctSuits,
    aceHigh: !!rules.aceHigh,
    maxJokers: rules.maxJokersPerMeld === undefined || rules.maxJokersPerMeld === null ? Infinity : Number(rules.maxJokersPerMeld),
    minNaturals: Number(rules.minNaturalsPerMeld || 0),
  };
}

// the hand as counts: naturals by "rank suit" (rank 1–13) and the jokers
function countsOf(codes) {
  const naturals = new Map();
  let jokers = 0;
  for (const code of codes) {
    if (isJoker(code)) { jokers += 1; continue; }
    const key = `${rankOf(code)}${suitOf(code)}`;
    naturals.set(key, (naturals.get(key) || 0) + 1);
  }
  return { naturals, jokers };
}

// every way a set of `size` cards could be taken from the hand now: [natural keys, jokers]
function setChoices(hand, size, r) {
  const out = [];
  const fewest = Math.max(r.minNaturals, size - Math.min(r.maxJokers, hand.jokers));
  for (let rank = 1; rank <= 13; rank++) {
    const have = SUIT_CODES.map((s) => [`${rank}${s}`, hand.naturals.get(`${rank}${s}`) || 0]).filter(([, n]) => n > 0);
    if (!have.length) continue;
    // per suit, how many of its naturals to take (at most one each when suits are distinct)
    const pick = (i, left, chosen) => {
      if (i === have.length) {
        const taken = size - left;
        if (taken >= fewest && taken <= size) out.push([chosen.slice(), left]);
        return;
      }
      const [key, n] = have[i];
      const most = Math.min(r.distinct ? 1 : n, left);
      for (let k = most; k >= 0; k--) {
        for (let j = 0; j < k; j++) chosen.push(key);
        pick(i + 1, left - k, chosen);
        chosen.length -= k;
      }
    };
    pick(0, size, []);
  }
  return out;
}

// every way a run of `size` cards could be taken from the hand now (a joker for a gap,
// or for a natural the hand holds, within the rules' joker and natural limits)
function runChoices(hand, size, r) {
  const out = [];
  const top = r.aceHigh ? 14 : 13;
  for (const suit of SUIT_CODES) {
    for (let start = 1; start + size - 1 <= top; start++) {
      const held = [];
      let gaps = 0;
      for (let rank = start; rank < start + size; rank++) {
        const key = `${rank === 14 ? 1 : rank}${suit}`;
        if (hand.naturals.get(key)) held.push(key); else gaps += 1;
      }
      if (gaps > hand.jokers || gaps > r.maxJokers || held.length < r.minNaturals) continue;
      // up to `spare` of the held naturals left in the hand, a joker in their place
      const spare = Math.min(hand.jokers - gaps, r.maxJokers - gaps, held.length - r.minNaturals, 2);
      const dropped = [];
      const emit = (from, left) => {
        out.push([held.filter((_, j) => !dropped.includes(j)), gaps + dropped.length]);
        for (let j = from; left > 0 && j < held.length; j++) { dropped.push(j); emit(j + 1, left - 1); dropped.pop(); }
      };
      emit(0, spare);
    }
  }
  return out;
}

function take(hand, [keys, jokers], by) {
  for (const key of keys) hand.naturals.set(key, hand.naturals.get(key) - by);
  hand.jokers -= by * jokers;
}

function fits(hand, [keys, jokers]) {
  if (jokers > hand.jokers) return false;
  const need = new Map();
  for (const key of keys) need.set(key, (need.get(key) || 0) + 1);
  for (const [key, n] of need) if ((hand.naturals.get(key) || 0) < n) return false;
  return true;
}

// the nodes the last search visited (for a test's and a benchmark's eyes)
export let lastNodes = 0;

// which of the contract's requirements the hand fills at once, the most of them:
// [{run, size, held}], sets first, then by size
export function heldRequirements(codes, contract, rules) {
  const reqs = (contract.melds || []).map((m) => ({ run: m.kind === "MELD_KIND_RUN", size: Number(m.size) }));
  const r = rulesOf(rules);
  const hand = countsOf(codes);
  let best = reqs.map(() => false);
  let bestCount = 0;
  let nodes = 0;
  const chosen = reqs.map(() => false);
  // (alike requirements side by side take their melds in one order only: a meld's key
  // not below the one the requirement before took)
  reqs.sort((a, b) => Number(a.run) - Number(b.run) || a.size - b.size);
  const keyOf = ([keys, jokers]) => `${keys.join(",")}+${jokers}`;
  const search = (i, count, after) => {
    nodes += 1;
    if (count > bestCount) { best = chosen.slice(); bestCount = count; }
    if (i === reqs.length || count + reqs.length - i <= bestCount || nodes > BUDGET) return;
    const req = reqs[i];
    const next = reqs[i + 1];
    const alike = next && next.run === req.run && next.size === req.size;
    const choices = req.run ? runChoices(hand, req.size, r) : setChoices(hand, req.size, r);
    for (const choice of choices) {
      const key = keyOf(choice);
      if (after !== null && key < after) continue;
      if (!fits(hand, choice)) continue;
      take(hand, choice, 1);
      chosen[i] = true;
      search(i + 1, count + 1, alike ? key : null);
      chosen[i] = false;
      take(hand, choice, -1);
      if (bestCount === reqs.length || nodes > BUDGET) return;
    }
    // (skipped: the alike requirements after it are skipped too, in this order)
    if (alike) {
      let j = i + 1;
      while (j < reqs.length && reqs[j].run === req.run && reqs[j].size === req.size) j += 1;
      search(j, count, null);
    } else {
      search(i + 1, count, null);
    }
  };
  search(0, 0, null);
  lastNodes = nodes;
  return reqs.map((q, k) => ({ ...q, held: best[k] }));
}

// per requirement ("2 groups"), how many the hand holds: [{run, size, need, have}]
export function contractHeld(codes, contract, rules) {
  const held = heldRequirements(codes, contract, rules);
  const groups = [];
  for (const m of contract.melds || []) {
    const run = m.kind === "MELD_KIND_RUN";
    let g = groups.find((x) => x.run === run && x.size === Number(m.size));
    if (!g) groups.push(g = { run, size: Number(m.size), need: 0, have: 0 });
    g.need += 1;
  }
  for (const q of held) if (q.held) groups.find((x) => x.run === q.run && x.size === q.size).have += 1;
  return groups;
}

// "2 groups: you have 1" (whiskertrail's exact sizes: "2 sets: you have 1"), each
// requirement in turn; "you can lay it now" when the hand holds them all
export function progressText(codes, contract, rules) {
  const groups = contractHeld(codes, contract, rules);
  if (!groups.length) return "";
  const exact = !!rules.exactContractSizes;
  const parts = groups.map(({ run, need, have }) => {
    const noun = exact ? (run ? "run" : "set") : (run ? "sequence" : "group");
    return `${need} ${need === 1 ? noun : `${noun}s`}: you have ${have}`;
  });
  const all = groups.every((g) => g.have >= g.need);
  return `${parts.join("; ")}${all ? " ✓ you can lay it now" : ""}`;
}
