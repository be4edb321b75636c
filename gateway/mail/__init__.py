"""E-mail: a confirmed address per account, the outbox every gateway sends from, the immediate
mails and the daily digest (EmailService in notices.proto)."""
