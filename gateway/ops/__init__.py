"""Running the gateway: the CLI (`cli`), the admin API and `/healthz` (`admin`), the
spend report (`report`), Prometheus metrics on an injected registry (`metrics`, the one
home of every metric) and tenant keys (`tenants`). `metrics` is imported from every
layer; the rest may import anything."""
