-- The ledger (one row per upstream call, the system of record) and its per tenant-month
-- counters. Ids, tenants and periods compare byte-wise (COLLATE "C"): their order does not
-- move with the server's locale, and the ledger's cursors stay valid.

CREATE TABLE ledger (
    id text COLLATE "C" PRIMARY KEY,
    ts double precision NOT NULL,
    period text COLLATE "C" NOT NULL,
    tenant text COLLATE "C" NOT NULL,
    plan text NOT NULL,
    customer text COLLATE "C",
    conversation text,
    model text NOT NULL,
    route text NOT NULL,
    fresh_input_tokens bigint NOT NULL,
    cached_input_tokens bigint NOT NULL,
    cache_write_tokens bigint NOT NULL,
    output_tokens bigint NOT NULL,
    reasoning_tokens bigint NOT NULL,
    cost_units bigint,  -- 1e-10 USD; NULL when the model has no price
    estimated boolean NOT NULL,
    budgets text[] NOT NULL DEFAULT '{}',
    reservation text
);

-- A tenant's ledger newest first (its pages), all tenants newest first, a period's rows,
-- a customer's rows.
CREATE INDEX ledger_tenant_recent ON ledger (tenant, ts DESC, id DESC);
CREATE INDEX ledger_recent ON ledger (ts DESC, id DESC);
CREATE INDEX ledger_period ON ledger (period, tenant, ts);
CREATE INDEX ledger_customer ON ledger (tenant, customer);

CREATE TABLE spend_month (
    period text COLLATE "C" NOT NULL,
    tenant text COLLATE "C" NOT NULL,
    plan text NOT NULL,
    requests bigint NOT NULL DEFAULT 0,
    fresh_input_tokens bigint NOT NULL DEFAULT 0,
    cached_input_tokens bigint NOT NULL DEFAULT 0,
    cache_write_tokens bigint NOT NULL DEFAULT 0,
    output_tokens bigint NOT NULL DEFAULT 0,
    reasoning_tokens bigint NOT NULL DEFAULT 0,
    cost_units bigint NOT NULL DEFAULT 0,
    estimated_requests bigint NOT NULL DEFAULT 0,
    unpriced_requests bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (period, tenant)
);
