"""Batches past one machine, on Celery with a Redis broker (the ``scale`` extra).

`audit batch PAIRS.csv --queue URL` enqueues one task per row (`submit`), each with the run id
it will keep; `audit worker --queue URL` runs them on any machine (`worker`), through the same
per-row code as the local process pool (`automaton_auditor.batch.run_job`), with runs
checkpointed in the shared PostgreSQL database. Tasks are acknowledged late: a worker that dies
mid-audit leaves its task to be delivered again after the visibility timeout, and the next
worker resumes the run from its last checkpoint instead of starting over (`app`).
"""
