"""Tenants and their keys as data: `keys` (pure records and rules), `registry` (the
store-backed registry every replica follows). Imports config, errors and the store."""
