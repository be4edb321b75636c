"""Following, presence, profiles and a player's own settings (FriendService, ProfileService)."""
