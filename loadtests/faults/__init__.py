"""`make faults`: games played through faults, then every game checked (docs/FAULTS.md).

Bot clients (the SDK, gRPC, the public API only) keep ``--games`` tables in play
through two ``glintwick serve`` processes (each client balances round-robin over
both), most by unary calls, some on Play sessions, with spectators watching some
games, while the campaign injects its fault steps one after another:

* ``kill-server``: SIGKILL of one server process (the clients fail over to the
  other), restarted on its port a few seconds later;
* ``kill-store``: SIGKILL of Redis, restarted from its data directory (AOF with
  ``appendfsync always``: no acknowledged write is lost);
* ``freeze-store``: Redis stopped (SIGSTOP) several seconds, then resumed;
* ``drop-clients``: for a few seconds the clients give up calls mid-flight
  (cancelled after a random few milliseconds) and close channels with calls in
  flight, and retry (each move with its request id);
* ``--topology cluster``: a Redis Cluster (loadtests/processes/cluster.py, three
  primaries with a replica each) and servers on ``--ack replica`` (a write is
  answered once its slot's replica has it), whose store faults differ
  (:meth:`Topology.store_steps`): ``primary-failover`` in place of ``kill-store``
  (SIGKILL of the primary with the most games in play until its replica is
  promoted, then the old node restarted: it rejoins as a replica), and two
  freezes of that primary, ``freeze-primary-short`` (shorter than the cluster's
  node timeout: nothing fails over) and ``freeze-primary`` (longer: its replica is
  promoted while it sleeps, and it rejoins as a replica once resumed).

Each client retries every refused call with the same request id (a move is applied
once however often it is sent) and records each move acknowledged (a success
answer).  Once the steps are done no new table starts and every table plays to
its end.  Then each game is checked against the store and the public API:

* its stored state equals the replay of its own action log (the seed from
  GetReplay, each logged action applied by the engine);
* the log holds exactly the moves the client had acknowledged: none missing (lost),
  none twice (a request id once), none the client never had answered;
* every watcher and every Play session, resumed however often, got every event
  after its first exactly once, in order;
* the game is over.

It prints the figures (games, moves, faults, client errors by code, moves lost,
recovery after each fault: from the fault until acknowledged moves are back to half
their rate before it) and exits non-zero on any loss or failed check.  `make faults`
runs both topologies, one after the other (`python -m loadtests.faults --topology …` one).

The package, a module a concept: :mod:`~loadtests.faults.topologies` (the Redis the
servers use and what a fault does to it), :mod:`~loadtests.faults.steps` (the fault
steps, in order), :mod:`~loadtests.faults.campaign` (the bot clients and their tables),
:mod:`~loadtests.faults.figures` (what the run counts), :mod:`~loadtests.faults.checks`
(each game checked, the verdict) and :mod:`~loadtests.faults.run` (the command).
"""
