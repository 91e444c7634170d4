// Provably fair deals (docs/SHUFFLE.md), checked in the browser with its own SHA-256:
// round_seed = SHA-256("glintwick/round" || seed || uint32_be(round)),
// commitment = SHA-256("glintwick/commit" || round_seed).

const encoder = new TextEncoder();

export function fromHex(hex) {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function toHex(bytes) {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

function uint32be(n) {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n, false);
  return b;
}

async function sha256(bytes) {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

export async function roundSeed(seedHex, round) {
  return sha256(concat(encoder.encode("glintwick/round"), fromHex(seedHex), uint32be(round)));
}

export async function commitment(roundSeedBytes) {
  return toHex(await sha256(concat(encoder.encode("glintwick/commit"), roundSeedBytes)));
}

// rounds: [{round, commitment, revealed}] from the game's public events; returns one
// verdict per round: the seed's round seed, its commitment, and whether both match
export async function verifyRounds(seedHex, rounds) {
  const verdicts = [];
  for (const r of rounds) {
    const seed = await roundSeed(seedHex, r.round);
    const expected = await commitment(seed);
    const seedHexOfRound = toHex(seed);
    verdicts.push({
      round: r.round,
      commitment: r.commitment,
      recomputed: expected,
      roundSeed: seedHexOfRound,
      ok: expected === r.commitment && (!r.revealed || r.revealed === seedHexOfRound),
    });
  }
  return verdicts;
}

// The deal itself (docs/SHUFFLE.md, "Algorithm"): the deck's ids in increasing order,
// Fisher–Yates driven by the word stream SHA-256(round_seed || uint32_be(epoch) ||
// uint64_be(block)), four big-endian 64-bit words a block, rejection keeping uniform(n)
// free of modulo bias. Returns the stock, top first.
const TWO64 = 1n << 64n;

function uint64be(n) {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, n, false);
  return b;
}

export async function shuffledDeck(roundSeedBytes, epoch, size) {
  const items = Array.from({ length: size }, (_, i) => i);
  const words = [];
  let block = 0n;
  const next = async () => {
    if (!words.length) {
      const digest = await sha256(concat(roundSeedBytes, uint32be(epoch), uint64be(block)));
      block += 1n;
      const view = new DataView(digest.buffer);
      for (let k = 0; k < 4; k++) words.push(view.getBigUint64(8 * k, false));
    }
    return words.shift();
  };
  for (let i = size - 1; i > 0; i--) {
    const n = BigInt(i + 1);
    const limit = TWO64 - (TWO64 % n);
    let x = await next();
    while (x >= limit) x = await next();
    const j = Number(x % n);
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

// one card at a time to each seat from the round's first seat ((round - 1) mod seats),
// then (where the rules turn one up) the upcard
export function dealFrom(deck, seats, round, perSeat, upcard) {
  const first = (round - 1) % seats;
  const hands = Array.from({ length: seats }, () => []);
  for (let j = 0; j < seats * perSeat; j++) hands[(first + j) % seats].push(deck[j]);
  return { hands, upcard: upcard ? deck[seats * perSeat] : null };
}
