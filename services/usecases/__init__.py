"""The service's use cases, one module each, behind the facade :class:`services.api.GameService`.

Each module is a set of coroutines over one shared :class:`~services.usecases.context.Context`
(the store, the configuration and the per-process caches):

* :mod:`.rule_sets`, :mod:`.lobby`: rule sets, creating, joining and filling games;
* :mod:`.moves`: validating and submitting actions (the one path of a move);
* :mod:`.views`: a seat's or a spectator's view, legal actions;
* :mod:`.watch`: the event stream of a game;
* :mod:`.play`: play sessions (many seats per stream: events, prompts, acts);
* :mod:`.streams`: what a watch and a play session share (where a stream starts,
  version 0's events, the end of a stream when the server stops);
* :mod:`.deadlines`: default actions for passed deadlines;
* :mod:`.house_bots`: the house-bot names a game may seat, the bot-turn listing;
* :mod:`.analysis`: the solver's analysis of a hand;
* :mod:`.replay`: the published replay of a finished game.

:mod:`.records` holds the pure rules of a stored record (what a write indexes, when
its deadline passes) and :mod:`.access` who may act for which seat.
"""
