"""Live game events for watchers: event ids (event_ids.py), one watcher's ordered view of a game
(watcher.py), and the process's fan-out of pub/sub batches to its watchers (hub.py)."""
