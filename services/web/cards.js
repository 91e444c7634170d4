// Cards, melds and contracts for people (docs/RULES.md). A card code is its rank
// letter (A 2–9 T J Q K) and suit letter (C D H S), or JK.

export const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
const SUIT_ORDER = { C: 0, D: 1, S: 2, H: 3 };
const RANKS = "A23456789TJQK";
const RANK_NAMES = ["", "ace", "2", "3", "4", "5", "6", "7", "8", "9", "10", "jack", "queen", "king", "ace"];
const NUMBERS = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen"];

export function isJoker(code) { return code === "JK"; }
export function rankOf(code) { return isJoker(code) ? 99 : RANKS.indexOf(code[0]) + 1; }
export function suitOf(code) { return isJoker(code) ? "" : code[1]; }

// a rank's letter in a card code ("T" for ten; 14, a high ace, is "A")
export function rankCode(rank) { return RANKS[(rank - 1) % 13]; }

export function rankText(rank) {
  const r = rank === 14 ? 1 : rank;
  return r === 10 ? "10" : RANKS[r - 1];
}

export function cardLabel(code) {
  if (isJoker(code)) return "joker";
  return `${RANK_NAMES[rankOf(code)]} of ${SUIT_NAMES[suitOf(code)]}`;
}

export function cardFace(code) {
  if (isJoker(code)) return "JK";
  return `${rankText(rankOf(code))}${SUITS[suitOf(code)]}`;
}

export function isRed(code) { return code[1] === "H" || code[1] === "D"; }

export function sortCards(cards, mode) {
  const copy = [...cards];
  if (mode === "suit") {
    copy.sort((a, b) => (SUIT_ORDER[suitOf(a.code)] ?? 9) - (SUIT_ORDER[suitOf(b.code)] ?? 9)
      || rankOf(a.code) - rankOf(b.code) || a.id - b.id);
  } else {
    copy.sort((a, b) => rankOf(a.code) - rankOf(b.code)
      || (SUIT_ORDER[suitOf(a.code)] ?? 9) - (SUIT_ORDER[suitOf(b.code)] ?? 9) || a.id - b.id);
  }
  return copy;
}

export function isRun(meld) { return meld.kind === "MELD_KIND_RUN"; }

// What each card of a meld stands for: a joker's place in a run, its rank in a set
// (and, where a set's suits are distinct, a suit its naturals lack).
export function meldStandsFor(meld, distinctSuits) {
  const cards = meld.cards || [];
  if (isRun(meld)) {
    return cards.map((c, i) => {
      const rank = meld.rank + i;
      return isJoker(c.code) ? `${rankCode(rank)}${meld.suit}` : c.code;
    });
  }
  const missing = Object.keys(SUITS).filter((s) => !cards.some((c) => suitOf(c.code) === s));
  let m = 0;
  return cards.map((c) => {
    if (!isJoker(c.code)) return c.code;
    const suit = distinctSuits && m < missing.length ? missing[m++] : "";
    return `${rankCode(meld.rank)}${suit}`;
  });
}

// what a joker stands for: a card code ("TS") or, in a set whose suit is open, a rank ("T")
export function standsForLabel(code) {
  if (code.length === 2) return cardLabel(code);
  return `any ${RANK_NAMES[rankOf(code)]}`;
}

export function standsForFace(code) {
  if (code.length === 2) return cardFace(code);
  return rankText(rankOf(code));
}

export function meldTitle(meld) {
  if (isRun(meld)) {
    const n = (meld.cards || []).length;
    return `run of ${SUIT_NAMES[meld.suit]}, ${rankText(meld.rank)} to ${rankText(meld.rank + n - 1)}`;
  }
  return `set of ${RANK_NAMES[meld.rank]}s`;
}

// "two sets of three", "one group and one sequence (3+, 4+)"
export function describeContract(contract, exact) {
  const melds = contract.melds || [];
  const groups = new Map();
  for (const m of melds) {
    const key = `${m.kind}/${m.size}`;
    groups.set(key, { kind: m.kind, size: m.size, n: (groups.get(key)?.n || 0) + 1 });
  }
  const parts = [...groups.values()].map(({ kind, size, n }) => {
    const run = kind === "MELD_KIND_RUN";
    const noun = exact ? (run ? "run" : "set") : (run ? "sequence" : "group");
    const plural = n === 1 ? noun : `${noun}s`;
    const of = exact ? ` of ${NUMBERS[size] || size}` : ` of ${NUMBERS[size] || size} or more`;
    return `${NUMBERS[n] || n} ${plural}${of}`;
  });
  return parts.join(" and ") || "nothing";
}
