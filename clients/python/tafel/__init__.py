"""tafel: the Python SDK, terminal client and bots of the tafel game platform.

Generated protobuf code lives in the same `tafel` namespace (tafel.play.v1, tafel.games.v1, ...):
in a checkout it comes from gen/ (made by `make gen`), in a built wheel it is packaged alongside.
"""

__path__ = __import__("pkgutil").extend_path(__path__, __name__)
