"""How much history each conversation carries. `engine` is the pure window engine
(slices, budgets, what to compact) and `prompts` the texts it adds; `summaries` folds
turns and finds facts (pure); `types` is the plain data they share. `builder` is the
engine's I/O shell (loads the conversation, summarizes before evicting, persists),
with `summarizer` (model or extractive), `classify`, `policy` (context.yaml) and
`conversations` (the records in the store).

The pure half (`engine`, `prompts`, `types`, `summaries`, `linear_regex`) imports only
itself, `gateway.messages` and the standard library (plus RE2)."""
