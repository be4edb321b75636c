"""Loaded by `python -m tools.bench_calls` into the servers it starts (PYTHONPATH points here;
Python imports a `sitecustomize` module at start-up): SIGUSR1 starts cProfile on the main thread
(the event loop's), SIGUSR2 stops it and writes the counts to TAFEL_CALL_CENSUS/<pid>.prof.
Nothing happens without TAFEL_CALL_CENSUS, so a process that inherits the path is untouched."""

import os

_OUT = os.environ.get("TAFEL_CALL_CENSUS")
if _OUT:
    import cProfile
    import signal

    _profile = cProfile.Profile()

    def _start(*_: object) -> None:
        _profile.enable()

    def _stop(*_: object, out: str = _OUT) -> None:
        _profile.disable()
        _profile.dump_stats(os.path.join(out, f"{os.getpid()}.prof"))

    signal.signal(signal.SIGUSR1, _start)
    signal.signal(signal.SIGUSR2, _stop)
