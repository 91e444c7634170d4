"""The deterministic, language-neutral shuffle and seed commitments.

Any client in any language can re-derive a deal from a revealed seed:

1. ``round_seed = SHA-256("glintwick/round" || seed || uint32_be(round))`` where
   ``seed`` is the game's seed bytes and ``round`` counts from 1.
2. The shuffle of a round's ``epoch`` (0 = the deal, 1, 2, … = later reshuffles
   of the discard pile) reads a stream of 64-bit words: block ``i`` is
   ``SHA-256(round_seed || uint32_be(epoch) || uint64_be(i))``, cut into four
   big-endian uint64 words.
3. ``uniform(n)``: take the next word ``x``; reject it while
   ``x >= 2**64 - (2**64 mod n)``; return ``x mod n`` (no modulo bias).
4. Fisher–Yates: for ``i`` from ``len - 1`` down to ``1``: ``j = uniform(i + 1)``,
   swap items ``i`` and ``j``.  The input is the cards in id order (for a deal) or
   the cards in pile order, bottom first (for a reshuffle).  The result is the
   stock with ``stock[0]`` on top: it is dealt or drawn first.
5. The commitment published at each deal is ``SHA-256("glintwick/commit" || round_seed)``
   in hex; revealing ``round_seed`` (or the game seed) lets anyone check it.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")

_ROUND_TAG = b"glintwick/round"
_COMMIT_TAG = b"glintwick/commit"
_TWO_64 = 1 << 64


def round_seed(seed: bytes, round_number: int) -> bytes:
    return hashlib.sha256(_ROUND_TAG + seed + struct.pack(">I", round_number)).digest()


def commitment(seed_of_round: bytes) -> str:
    return hashlib.sha256(_COMMIT_TAG + seed_of_round).hexdigest()


def _words(seed_of_round: bytes, epoch: int) -> Iterator[int]:
    prefix = seed_of_round + struct.pack(">I", epoch)
    block = 0
    while True:
        digest = hashlib.sha256(prefix + struct.pack(">Q", block)).digest()
        yield from struct.unpack(">4Q", digest)
        block += 1


def shuffled(items: Sequence[T], seed_of_round: bytes, epoch: int) -> list[T]:
    """A new list: ``items`` shuffled by the documented algorithm."""
    result = list(items)
    words = _words(seed_of_round, epoch)
    for i in range(len(result) - 1, 0, -1):
        n = i + 1
        limit = _TWO_64 - (_TWO_64 % n)
        x = next(words)
        while x >= limit:
            x = next(words)
        j = x % n
        result[i], result[j] = result[j], result[i]
    return result
