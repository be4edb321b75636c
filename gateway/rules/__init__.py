"""The gateway's way to the rules services, one idea per module:

- router.py: RulesRouter, where each game type's actions, creations, views and descriptions go;
- stream.py: one long-lived ApplyMoves stream to one replica, batching and multiplexing entries;
- replicas.py: a replica (channel, streams, health) and a game type's set of them;
- placement.py: which replica a game goes to (rendezvous hashing);
- discovery.py: finding a game type's replicas by DNS;
- refusals.py: a rules service's refusals and failures as the gateway's Refused.
"""

from gateway.rules.replicas import RulesAccess
from gateway.rules.router import RulesRouter

__all__ = ["RulesAccess", "RulesRouter"]
