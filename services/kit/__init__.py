"""What every rules service shares: the pure-rules contract, codec, server factory, settings,
logging, metrics, the Redis game store and the conformance suite."""
