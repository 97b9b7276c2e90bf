"""Development tools, not the request path: the simulated upstream (`simulator`,
`simulator_apis`, `simulator_cache`, `simulator_replies`), the demo and the labelled
loop workload. Used by tests, benchmarks, `gateway demo` and `base_url: simulator`;
no runtime module imports them at module level."""
