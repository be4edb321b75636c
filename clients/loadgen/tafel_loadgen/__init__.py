"""The tafel load generator: scenarios `games`, `watchers` and `tournament` over the public API."""
