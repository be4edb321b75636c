"""`python -m services.coloursquare`: the Colour Square rules service."""

from services.coloursquare.codec import CODEC
from services.coloursquare.rules import RULES
from services.kit.main import serve_rules

if __name__ == "__main__":
    serve_rules(RULES, CODEC)
