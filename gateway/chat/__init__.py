"""Chat in games (players' and spectators' channels), rooms and tournaments: model -> store ->
service, with one reader per channel per gateway fanning lines out to local watches (hub)."""
