"""An account's standing on the platform: roles (who may call what), sanctions, blocks and mutes,
reports, warnings and the audit log, and an account's whole life (change password, export,
delete). model -> store -> tables (the in-memory mirror every gateway checks calls against) ->
guard (the front door's decision) -> services (SafetyService, tafel.admin.v1)."""
