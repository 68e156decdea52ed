"""What the auditor keeps between runs, all under one cache directory: one key-value store and
the one code-version digest (`kv`), the detectives' facts (`facts`), whole-audit results
(`results`), the judges' model answers (`opinions`) and LangGraph run checkpoints (`runs`).
"""
