"""tafel: the Python SDK, terminal client and bots of the tafel game platform.

Generated protobuf code lives in the same `tafel` namespace (tafel.play.v1, tafel.games.v1, ...),
since protobuf names a module after its proto package: in a checkout it comes from gen/ (made by
`make gen`, joined to this package's path below), in the SDK's wheel it is inside this package
(clients/python/setup.py copies the public API's modules in).
"""

__path__ = __import__("pkgutil").extend_path(__path__, __name__)
