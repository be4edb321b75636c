"""The account event stream: what a client learns without polling (challenges, games starting,
offers in a game), kept per account in Redis and delivered live, resumable by event id."""
