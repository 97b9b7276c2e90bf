"""The PostgreSQL ledger's schema migrations, `NNNN_name.sql`, applied in order by
`gateway.store.postgres.PostgresLedger.migrate`. A shipped file never changes: a new
change is a new file with the next number."""
