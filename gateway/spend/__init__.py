"""Money and ceilings: `money` (integer 1e-10 USD units), `pricing` (genai-prices and
the config's table), `ceilings` (spend.yaml: budgets per tenant and customer),
`guard` (reserve a call's worst case, block or degrade) and `hold` (a reservation's one
lifecycle: renewed, then settled or released). May import `gateway.ledger.usage`,
`gateway.store`, `gateway.ops.metrics`; never the proxy."""
