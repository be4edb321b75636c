"""Supervised background tasks: no task the servers start may fail unseen.

asyncio keeps a task's exception until someone asks for it; a task nobody awaits that fails is
reported only when it is collected ("Task exception was never retrieved"), without the call that
waited on its work ever learning of it (a FindMatch waited forever on a search whose script was
missing). Every task a server starts is therefore one of:

- awaited by the call it serves, which maps its failure to the call's status (kit/errors.py
  ``refusing``: INTERNAL with a generic message for a bug, UNAVAILABLE for a Redis outage);
- a ``Loop`` (kit/loops.py), which restarts its step with backoff for as long as it must run;
- started with ``spawn`` (or given to ``supervise``): its failure is logged once, with its
  traceback, when it ends, and ``on_failure`` lets its owner end whatever waits on it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
F = TypeVar("F", bound="asyncio.Future[Any]")

_log = logging.getLogger("tafel.tasks")


def supervise(
    task: F,
    what: str,
    *,
    log: logging.Logger = _log,
    on_failure: Callable[[BaseException], None] | None = None,
) -> F:
    """Log `task`'s failure (not its cancellation) once, with its traceback, when it ends, and
    call `on_failure` with it; retrieving the exception here is what keeps asyncio quiet."""

    def ended(done: asyncio.Future[Any]) -> None:
        if done.cancelled():
            return
        error = done.exception()
        if error is None:
            return
        log.error("%s failed", what, exc_info=(type(error), error, error.__traceback__))
        if on_failure is not None:
            try:
                on_failure(error)
            except Exception:  # the owner's handler must not hide the first failure
                log.exception("%s: handling its failure failed", what)

    task.add_done_callback(ended)
    return task


def spawn(
    coro: Coroutine[Any, Any, T],
    what: str,
    *,
    log: logging.Logger = _log,
    on_failure: Callable[[BaseException], None] | None = None,
) -> asyncio.Task[T]:
    """A task of its own for `coro`, supervised (see ``supervise``) and named `what`."""
    task = asyncio.get_running_loop().create_task(coro, name=what)
    supervise(task, what, log=log, on_failure=on_failure)
    return task
