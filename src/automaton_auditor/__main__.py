"""`python -m automaton_auditor` runs the CLI."""

from automaton_auditor.cli import main

main()
