"""Imported first by this package's programs (the terminal client, the bot pool, the load
generator): gRPC's channel sockets read and written on the thread that waits for completions
instead of EventEngine's pool (the ``event_engine_client`` experiment off), one hand-over between
threads fewer a message. The servers do the same for both ends (kit/grpc_polling.py says why and
what it bought). gRPC reads GRPC_EXPERIMENTS once, when it is first imported, hence the side
effect on import; a value naming the experiment, or ``TAFEL_GRPC_EVENT_ENGINE=1``, is left alone.
A program that only imports the SDK keeps gRPC's defaults.
"""

import os

_NAME = "event_engine_client"
_current = os.environ.get("GRPC_EXPERIMENTS", "")
# (By whole name: event_engine_client_channel_resolver is another experiment.)
_named = {item.strip().lstrip("-") for item in _current.split(",")}
if os.environ.get("TAFEL_GRPC_EVENT_ENGINE", "") != "1" and _NAME not in _named:
    os.environ["GRPC_EXPERIMENTS"] = ",".join(filter(None, (_current.strip(","), f"-{_NAME}")))
