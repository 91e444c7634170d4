"""The documented shuffle (docs/SHUFFLE.md): its published test vector and its laws."""

from __future__ import annotations

import hashlib
import struct

from engine.cards import full_deck
from engine.shuffle import commitment, round_seed, shuffled


def test_published_vector_matches_docs() -> None:
    rs = round_seed(b"example-seed", 1)
    assert rs.hex() == "4e7c0aa0b5a04ce9c694e2a85bb9a6dd207e08f74b977c2e9f834e4b98f6810b"
    assert commitment(rs) == "a42fd27b9f432a6c61a66838a1f1c174adb4b801c94b20faebd48d69045860cb"
    stock = shuffled([c.id for c in full_deck(2, 4)], rs, 0)
    assert stock[:12] == [32, 83, 0, 107, 63, 20, 90, 41, 78, 34, 59, 79]


def _independent_shuffle(items: list[int], seed: bytes, round_number: int, epoch: int) -> list[int]:
    """A second implementation written from the prose of docs/SHUFFLE.md alone."""
    rs = hashlib.sha256(b"glintwick/round" + seed + round_number.to_bytes(4, "big")).digest()
    words: list[int] = []
    block = 0

    def next_word() -> int:
        nonlocal block
        if not words:
            digest = hashlib.sha256(
                rs + epoch.to_bytes(4, "big") + struct.pack(">Q", block)
            ).digest()
            block += 1
            words.extend(int.from_bytes(digest[k : k + 8], "big") for k in range(0, 32, 8))
        return words.pop(0)

    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        n = i + 1
        limit = 2**64 - (2**64 % n)
        x = next_word()
        while x >= limit:
            x = next_word()
        j = x % n
        out[i], out[j] = out[j], out[i]
    return out


def test_independent_reimplementation_agrees() -> None:
    ids = list(range(107))
    for seed in (b"", b"a", b"\x00" * 32, b"glintwick"):
        for round_number in (1, 7):
            for epoch in (0, 3):
                expected = _independent_shuffle(ids, seed, round_number, epoch)
                assert shuffled(ids, round_seed(seed, round_number), epoch) == expected


def test_shuffle_is_a_permutation_and_depends_on_every_input() -> None:
    ids = list(range(108))
    base = shuffled(ids, round_seed(b"s", 1), 0)
    assert sorted(base) == ids
    assert base != ids
    assert shuffled(ids, round_seed(b"s", 2), 0) != base
    assert shuffled(ids, round_seed(b"s", 1), 1) != base
    assert shuffled(ids, round_seed(b"t", 1), 0) != base
