"""The HTTP face of the gateway: the ASGI app (`app`), the chat request chain (`chat`),
the pass-through routes, the conversation and facts API, the one seam to the upstream
(`upstream`, over the lean `transport`), SSE relaying and body reading.

May import every other package; nothing below it imports `gateway.proxy` (but
`made_up_replies`, the builder of completions the gateway answers itself)."""
