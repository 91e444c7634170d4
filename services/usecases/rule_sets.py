"""The rule sets a server offers, and the one a request names or gives."""

from __future__ import annotations

from engine.errors import InvalidActionError, excerpt
from engine.rulesets import RuleSet
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from services.errors import invalid

from .context import Caller, Context


async def list_rule_sets(
    ctx: Context, request: pb.ListRuleSetsRequest, caller: Caller
) -> pb.ListRuleSetsResponse:
    return pb.ListRuleSetsResponse(
        rule_sets=[convert.rules_to_pb(r) for _, r in sorted(ctx.config.presets.items())]
    )


def requested_rules(ctx: Context, request: pb.CreateGameRequest | pb.AnalyseHandRequest) -> RuleSet:
    """The rule set a request names or gives (the ``rules`` oneof)."""
    # (the custom rule set is read only when given: an unset message field
    # read makes a stub, on every AnalyseHand call)
    which = request.WhichOneof("rules")
    if which == "custom_rule_set":
        try:
            return convert.rules_from_pb(request.custom_rule_set)
        except (InvalidActionError, ValueError) as exc:
            raise invalid(str(exc), "INVALID_RULE_SET") from exc
    if which == "rule_set_name" or which is None:
        presets = ctx.config.presets
        chosen = request.rule_set_name or "whiskertrail"
        if chosen not in presets:
            known = ", ".join(sorted(presets))
            raise invalid(f"unknown rule set {excerpt(chosen)}; known: {known}", "UNKNOWN_RULE_SET")
        return presets[chosen]
    raise invalid("choose a rule set")
