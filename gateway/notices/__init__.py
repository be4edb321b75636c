"""Notices: the inbox of each account and the settings of how notices reach it.

How a feature hands a notice in — the one way, from any gateway:

    from gateway.notices.inbox import notice_id
    note = notices_pb2.Notification(
        notification_id=notice_id("turn", game_id, version),  # the happening, not the moment
        kind=notices_pb2.NOTIFICATION_KIND_YOUR_TURN, game_id=game_id, game=game)
    new = await inbox.notify(player_id, note)          # guest=True for a guest's inbox

`Inbox.notify` (gateway/notices/inbox.py) is idempotent by notification_id: the same id never
makes two notices, even from two gateways at once or from a retry after the notice was read or
cleared (ids are remembered 30 days). It answers True when the notice is new. The notice and its
AccountEvent.notification are written by one script in the account's slot (nothing half-written).
A kind whose inbox switch the player turned off is not stored (False). `at` is set if unset; `read`
is ignored. Make ids with `notice_id(kind, *parts)` ([A-Za-z0-9_.:|-], at most 200 characters).

The gateway's one Inbox is built in gateway/server.py (`Gateway.inbox`); pass it to what produces
notices there.

For the e-mail worker ("mail"):
- `Inbox.hooks`: a list of `async def hook(player_id: str, note: Notification) -> None`, each
  called once after a new notice is stored (on the gateway whose notify stored it; never for a
  repeat). A hook's exception is logged, never raised to the producer. Immediate mails start here.
- `NoticeSettingsStore.get(player_id)` (gateway/notices/settings.py): the player's
  NotificationSettings with every kind listed (defaults where unchanged: every kind in the inbox;
  e-mail for TIME_RUNNING_OUT, CHALLENGE_RECEIVED, ROUND_STARTING_SOON, ANNOUNCEMENT; no quiet
  hours; UTC; the digest on, at 08:00 local). `settings.time_zone(name)` gives the ZoneInfo (UTC
  for ""). `Inbox.listing(player_id, unread_only=True)` reads what waits, for the digest.

Erasure and export (gateway/standing/account_life.py): `Inbox.replace_player` then `Inbox.erase`
and `NoticeSettingsStore.erase`; the export lists `Inbox.all` and the settings.
"""
