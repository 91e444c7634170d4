// The cost of the contract's progress (services/web/progress.js) on random hands:
// `node tools/web/progress-bench.mjs` (docs/WEB.md). Contract rummy's seven contracts in
// turn, 2000 hands of 10–19 cards from two decks and 4 jokers, then 2000 holding all
// 4 jokers and 16–25 other cards: the mean and worst time per hand, the most search
// nodes (the search stops at its budget, which no hand here reaches).
import { contractHeld, lastNodes } from "../../services/web/progress.js";

const deck = [];
for (let d = 0; d < 2; d++) for (const s of "CDHS") for (const r of "A23456789TJQK") deck.push(r + s);
const rules = { setDistinctSuits: true, aceHigh: true, minNaturalsPerMeld: 2, exactContractSizes: false };
const G = { kind: "MELD_KIND_SET", size: 3 };
const R = { kind: "MELD_KIND_RUN", size: 4 };
const contracts = [[G, G], [G, R], [R, R], [G, G, G], [G, G, R], [G, R, R], [R, R, R]];
let seed = 7;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const sample = (n) => [...deck].sort(() => rnd() - 0.5).slice(0, n);

for (const [name, hand] of [
  ["10–19 cards, jokers as dealt", (i) => sample(10 + (i % 10)).concat(rnd() < 4 / 108 ? ["JK"] : [])],
  ["all 4 jokers and 16–25 other cards", (i) => ["JK", "JK", "JK", "JK", ...sample(16 + (i % 10))]],
]) {
  const times = [];
  let nodes = 0;
  for (let i = 0; i < 2000; i++) {
    const cards = hand(i);
    const t0 = performance.now();
    contractHeld(cards, { melds: contracts[i % 7] }, rules);
    times.push(performance.now() - t0);
    nodes = Math.max(nodes, lastNodes);
  }
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  console.log(`${name}: mean ${mean.toFixed(3)} ms, 99th percentile ${times[1979].toFixed(2)} ms, most nodes ${nodes}`);
}
