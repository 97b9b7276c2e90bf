"""Conversations that go nowhere. `detector` is pure (similarity of what is asked and
answered, loop streaks, turn ceilings) and imports nothing of the gateway but
`gateway.messages`; `escalation` is its I/O shell (signal, instruct, handoff, webhooks)."""
