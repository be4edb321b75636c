"""Colour Square's rules service: the codec and entry point around its pure rules (tafel_rules.coloursquare)."""
