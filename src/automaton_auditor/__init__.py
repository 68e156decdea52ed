"""Automaton Auditor: audits a LangGraph repository and its architecture report like a court.

Layers, each importing only those below it:

- `cli/` — the `audit` command line (flags, progress, printing);
- `queue/` — batches on a distributed queue (Celery + Redis) and its workers;
- `batch`, `service` — many audits at once; the run flow of one audit and its exit code;
- `graph` — the courtroom wired as a LangGraph `StateGraph`;
- `nodes/` — the graph's nodes: context builder, detectives, aggregator, judges, Chief Justice,
  report writer;
- `output/` — the audit report we write (Markdown, JSON, manifest);
- `judging/` — the judges' opinions (offline bench or LLM) and the Chief Justice's rules;
- `forensics/` — the detectives' facts, one package per input kind (git, code, pdf, vision,
  diagrams);
- `storage/` — caches and run checkpoints (SQLite, or a shared PostgreSQL database);
- `state`, `settings`, `rubric`, `exits` — the foundation every layer shares.
"""
