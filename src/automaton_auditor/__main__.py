"""The `audit` console script and `python -m automaton_auditor`. Ctrl-C (and SIGTERM,
SIGHUP, SIGQUIT) is handled before anything heavy is imported, so an interrupt during
start-up is one line (exit 130, or 128 + the signal) too."""

from __future__ import annotations

import sys

from automaton_auditor.exits import (
    install_sigint,
    interrupted_code,
    is_interrupt,
    stop_line,
)


def run() -> None:
    """Install the Ctrl-C handling, then import and run the command line."""
    install_sigint()
    try:
        from automaton_auditor.cli import main
    except BaseException as exc:
        if not is_interrupt(exc):
            raise
        sys.stderr.write(stop_line() + "\n")
        sys.exit(interrupted_code())
    main()


if __name__ == "__main__":
    run()
