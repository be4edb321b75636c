"""The open-files limit a server starts with, raised to what the system allows.

A gateway holds a descriptor per connected player, and a runtime's default soft limit (1,024 under
containerd 2 and many shells) would refuse players past about a thousand while the hard limit
allows far more. A process may raise its own soft limit up to the hard one without privileges, so
each server does it at start; a deployment sets the hard limit (deploy/: the runtime's default, or
the host's `LimitNOFILE`). Setting it in the compose file instead failed where the host's hard
limit was lower than the file's: the container could not start at all."""

from __future__ import annotations

import resource


def open_files_to_hard_limit() -> int:
    """RLIMIT_NOFILE's soft limit up to its hard one; returns the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard and hard != resource.RLIM_INFINITY:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]
