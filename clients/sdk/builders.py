"""Constructors for the typed actions a seat submits."""

from __future__ import annotations

from collections.abc import Sequence

from glintwick.v1 import game_pb2 as pb


class actions:
    """Constructors for the typed actions (card and meld ids as the view shows them)."""

    @staticmethod
    def draw(from_discard: bool = False) -> pb.Action:
        source = pb.DRAW_SOURCE_DISCARD if from_discard else pb.DRAW_SOURCE_STOCK
        return pb.Action(draw=pb.Draw(source=source))

    @staticmethod
    def lay_contract(melds: Sequence[pb.MeldSpec] = ()) -> pb.Action:
        return pb.Action(lay_contract=pb.LayContract(melds=melds))

    @staticmethod
    def lay_off(
        card: int, meld: int, end: pb.RunEnd.ValueType = pb.RUN_END_UNSPECIFIED
    ) -> pb.Action:
        return pb.Action(lay_off=pb.LayOff(card=card, meld=meld, end=end))

    @staticmethod
    def discard(card: int) -> pb.Action:
        return pb.Action(discard=pb.Discard(card=card))

    @staticmethod
    def swap_joker(card: int, meld: int) -> pb.Action:
        return pb.Action(swap_joker=pb.SwapJoker(card=card, meld=meld))

    @staticmethod
    def end_turn() -> pb.Action:
        return pb.Action(end_turn=pb.EndTurn())

    @staticmethod
    def claim() -> pb.Action:
        return pb.Action(claim=pb.Claim())

    @staticmethod
    def pass_claim() -> pb.Action:
        return pb.Action(pass_claim=pb.PassClaim())
