"""Judging: the judges' opinions and the Chief Justice's rules. `offline` is the deterministic
rule-based bench; `llm*` and `models` run real chat models (prompts, schema, calls with retries,
usage, the dry-run plan); `rules` holds the Chief Justice's named, deterministic synthesis rules.
"""
