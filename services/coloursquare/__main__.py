"""`python -m services.coloursquare`: the Colour Square rules service."""

import kit.grpc_polling  # noqa: F401  (first: gRPC reads its experiments when imported)

# isort: split
from tafel_rules.coloursquare.rules import RULES

from services.coloursquare.codec import CODEC
from services.host.main import serve_rules

if __name__ == "__main__":
    serve_rules(RULES, CODEC)
