"""The command line: `audit TARGET REPORT` and its subcommands, a thin layer over
`automaton_auditor.service`. It parses flags, builds the run's settings, shows progress and
prints the outcome; the run flow and the exit-code contract live below it."""

from automaton_auditor.cli.app import app, main

__all__ = ["app", "main"]
