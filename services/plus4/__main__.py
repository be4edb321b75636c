"""`python -m services.plus4`: the Plus 4 rules service."""

import kit.grpc_polling  # noqa: F401  (first: gRPC reads its experiments when imported)

# isort: split
from tafel_rules.plus4 import RULES

from services.host.main import serve_rules
from services.plus4.codec import CODEC

if __name__ == "__main__":
    serve_rules(RULES, CODEC)
