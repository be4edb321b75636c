"""`python -m services.connect4`: the Connect Four rules service."""

import kit.grpc_polling  # noqa: F401  (first: gRPC reads its experiments when imported)

# isort: split
from tafel_rules.connect4 import RULES

from services.connect4.codec import CODEC
from services.host.main import serve_rules

if __name__ == "__main__":
    serve_rules(RULES, CODEC)
