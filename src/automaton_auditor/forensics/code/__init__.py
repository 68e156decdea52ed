"""The audited repository's Python code, read with `ast` and never imported or run.

`walk` parses each file once into JSON facts (`calls` records call facts, `classify` decides
what a call establishes, `interp`/`resolve` evaluate the graph-building code across modules);
`cache` keeps those facts by git blob id. `findings` turns the facts into findings, one family
per module: `topology` (the rebuilt LangGraph), `state_schema`, `safety`, `structured_output`,
`personas` (judge prompts), `synthesis` (the Chief Justice). `analyze` is the entry point.
"""
