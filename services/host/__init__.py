"""The rules host: what makes any pure rules module (tafel_rules) a RulesService — the move path
(moves.py), the ApplyMoves stream (stream.py), the RPCs (service.py), the Redis game store
(store.py), the state cache, the codecs, describe, replays and the conformance suite. Not the
platform kit (kit/), which both tiers share."""
