"""How much history each conversation carries. `engine` is the pure window engine
(slices, budgets, what to compact), with `transcript` (its input, the transcript split at
the summary's cursor, the least it can be sent as) and `records` (the operational state,
facts and episodes slices), `fact_blocks` which facts it shows where, and
`prompts` the texts it adds; `summaries` folds
turns and finds the operator's pattern facts, `model_answers` what of a summarizer
model's answer is kept, `people` (with its `people_*` parts) the
facts people state in pt/en/es, `episode_card` the card an earlier conversation becomes,
`redaction` what a card withholds, `unverified` the mark of a fact an unverified caller
stated, `facts_limit` what the app may put in a customer's facts and what a turn reads of
them (all pure); `types` is the plain data they share. `builder` is the engine's I/O
shell (loads the conversation, summarizes before evicting, persists), with `heard` (facts of
the turns), `summarizer` (model or extractive; episode cards), `classify`, `policy`
(context.yaml) and `conversations` (the records in the store).

The pure half (`engine`, `transcript`, `records`, `fact_blocks`, `prompts`, `types`,
`summaries`, `model_answers`, `people*`, `episode_card`, `redaction`, `unverified`, `facts_limit`,
`linear_regex`) imports
only itself, `gateway.messages` and the standard library (plus RE2)."""
