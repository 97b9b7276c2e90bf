"""Context-quota gateway: an OpenAI-compatible proxy that books every token to its tenant."""

__version__ = "0.1.0"
