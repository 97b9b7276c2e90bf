"""What every call cost: `usage` (normalizing each provider's usage shape), `tokens`
(counting, cached per message, with a learned per-model factor), `accounting` (price a
call and book it) and `booking` (group commit to the store, spill on outage). May import
`gateway.spend.pricing`/`money`, `gateway.store`, `gateway.ops.metrics`."""
