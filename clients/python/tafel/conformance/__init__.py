"""tafel-conformance: checks a client program against a running platform.

The runner launches the client under test with a documented command line (docs/clients.md,
"The conformance kit"), puts a recording, fault-injecting proxy between it and the gateway, plays
the other seats itself, and judges each scenario from what crossed the proxy, the game's record
and the client's output. `python -m tafel.conformance.reference_client` is a client that passes."""
