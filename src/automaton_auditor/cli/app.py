"""The `audit` command group: `audit TARGET REPORT` (the default command, `run`) beside the
subcommands `batch`, `resume`, `replay`, `runs` and `cache`.

`DefaultGroup` sends any first argument that is not a subcommand name to `run`, so
``audit <repo> <pdf>`` keeps working exactly as before; ``audit run <repo> <pdf>`` is the
same thing spelled out (use it, or ``./batch``, for a local folder named like a subcommand).
Only Typer is imported here; every command imports what it needs when it runs.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperGroup

from automaton_auditor.cli.batch import batch
from automaton_auditor.cli.cache import cache_app
from automaton_auditor.cli.diff import diff
from automaton_auditor.cli.run import audit, config
from automaton_auditor.cli.runs import replay, resume, runs

DEFAULT_COMMAND = "run"
APP_HELP = (
    "Audit a LangGraph repository and its architecture report like a court.\n\n"
    "audit TARGET REPORT [OPTIONS] runs one audit (the default command, `run`; "
    "`audit run --help` lists its options). Other commands: batch (many audits from a CSV/TSV "
    "file), resume / replay / runs (checkpointed runs), cache (show or clear the caches), config"
    " (the effective settings and where each came from)."
)


class DefaultGroup(TyperGroup):
    """A group whose unknown first argument (a target, or an option of the default command)
    falls through to the default command."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Insert the default command's name unless a subcommand or help is asked for."""
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = [DEFAULT_COMMAND, *args]
        return super().parse_args(ctx, args)


app = typer.Typer(cls=DefaultGroup, add_completion=False, no_args_is_help=True,
                  pretty_exceptions_enable=False, help=APP_HELP, options_metavar="",
                  subcommand_metavar="[run] TARGET REPORT [OPTIONS] | COMMAND [ARGS]...")
app.command(DEFAULT_COMMAND)(audit)
app.command("batch")(batch)
app.command("diff")(diff)
app.command("resume")(resume)
app.command("replay")(replay)
app.command("runs")(runs)
app.command("config")(config)
app.add_typer(cache_app, name="cache")


def main() -> None:
    """Console-script entry point. Every child process the audit starts is killed on the
    way out, whichever it is (`automaton_auditor.containment`)."""
    from automaton_auditor import containment

    containment.install_signal_handlers()
    try:
        app()
    finally:
        containment.kill_all(close=True)
