"""The audit trail (ADR 0011): an append-only log of grants, revokes, ownership changes, drops,
team changes and of which user's job read or wrote which tables. Imports only ``core`` and
Django's auth; ``catalog``, ``jobs`` and ``accounts`` write to it through ``audit.services``."""
