"""A typed Python client for the Glintwick service.

It hides what every caller would otherwise repeat: the seat token in the
metadata, the game version an action expects, a fresh request id per action
(reused on retries, so a retried action is applied once), retries on
``UNAVAILABLE`` and on ``ABORTED`` compare-and-set races, a ``RATE_LIMITED`` refusal
retried after the delay the server names (up to ``RetryPolicy.rate_limited_wait``),
deadlines on every call, and a watch stream that reconnects and resumes after the last event seen.

    async with GlintwickClient("127.0.0.1:50051") as client:
        game = await client.create_game("whiskertrail", seats=2)
        seat = await client.join(game.game_id, name="ann")
        view = await seat.view()
        await seat.act(actions.draw())

House bots (docs/BOTS.md): :meth:`Seat.fill_with_bots` fills a game's empty seats;
an operator lists the bot turns to play with :meth:`GlintwickClient.bot_turns` and
acts for a house-bot seat through :meth:`GlintwickClient.house_seat` (what
``clients/botpool.py`` does).

Connecting: ``GlintwickClient(["10.0.0.1:50051", "10.0.0.2:50051"])`` or
``GlintwickClient("dns:///glintwick:50051")`` balances round-robin over every
address; ``tls=True`` / ``root_certificates=pem`` / ``credentials=`` connect over
TLS (``serve --tls-cert/--tls-key``); ``timeout=`` sets each call's deadline and
``with client.deadline(seconds):`` a block's.

:class:`SyncClient` wraps the same calls for scripts that are not async.

The package, a module a concept: ``errors`` (:class:`CallError`), ``builders``
(:class:`actions`), ``channel`` (the target, TLS, balancing, :class:`RetryPolicy`),
``client`` (:class:`GlintwickClient`, :class:`Seat`), ``play`` (:class:`PlaySession`,
:class:`Prompt`) and ``sync`` (:class:`SyncClient`); every name is imported from here.
"""

from clients.sdk.builders import actions
from clients.sdk.channel import ROUND_ROBIN, RetryPolicy, channel_credentials, channel_target
from clients.sdk.client import GlintwickClient, Seat
from clients.sdk.errors import RETRYABLE, CallError, call_error
from clients.sdk.play import CORE_WRITE_FAILED, PlaySession, Prompt, play_error, stream_dropped
from clients.sdk.sync import SyncClient, SyncSeat

#: (the name it had when the SDK was one module)
_stream_dropped = stream_dropped

__all__ = [
    "CORE_WRITE_FAILED",
    "RETRYABLE",
    "ROUND_ROBIN",
    "CallError",
    "GlintwickClient",
    "PlaySession",
    "Prompt",
    "RetryPolicy",
    "Seat",
    "SyncClient",
    "SyncSeat",
    "actions",
    "call_error",
    "channel_credentials",
    "channel_target",
    "play_error",
    "stream_dropped",
]
