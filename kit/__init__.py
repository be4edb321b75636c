"""The platform kit: what both tiers (the rules services and the gateway) share.

Server factory, settings, logs, errors, the game catalogue and the Redis layer (kit/redis). The
rules tier's own machinery (the GameStore, the generic servicer, the conformance suite) stays in
services/host; the layers and what each may import are in docs/architecture.md.
"""
