"""The `audit` command group: `audit TARGET REPORT` (the default command, `run`) beside the
subcommands `batch`, `worker`, `diff`, `resume`, `replay`, `runs`, `config` and `cache`.

`DefaultGroup` sends any first argument that is not a subcommand name to `run`, so
``audit <repo> <pdf>`` keeps working exactly as before; ``audit run <repo> <pdf>`` is the
same thing spelled out (use it, or ``./batch``, for a local folder named like a subcommand).
Only Typer is imported here; every command imports what it needs when it runs.

`main` applies the command line's conventions: ``-h``/``--help``, ``--version``, a usage
error as ONE ``error:`` line with exit 2 (never Click's usage block), and Ctrl-C at any moment
(imports included) as one line with exit 130.
"""

from __future__ import annotations

import sys
from typing import Any

import typer
from typer.core import TyperGroup

from automaton_auditor.cli.batch import batch
from automaton_auditor.cli.cache import cache_app
from automaton_auditor.cli.diff import diff
from automaton_auditor.cli.run import audit, config
from automaton_auditor.cli.runs import replay, resume, runs
from automaton_auditor.cli.worker import worker
from automaton_auditor.exits import (
    ExitCode,
    error_line,
    install_sigint,
    interrupted_code,
    is_interrupt,
    note_error,
    said_error,
    stop_line,
)

DEFAULT_COMMAND = "run"
VERSION_OPTIONS = ("--version", "-V")
APP_HELP = (
    "Audit a LangGraph repository and its architecture report like a court.\n\n"
    "audit TARGET REPORT [OPTIONS] runs one audit (the default command, `run`; "
    "`audit run --help` lists its options). Other commands: batch (many audits from a CSV/TSV "
    "file; with --queue, on `audit worker`s), worker (runs queued audits), resume / replay / "
    "runs (checkpointed runs), cache (show or clear the caches), config (the effective "
    "settings and where each came from). `audit --version` prints the version."
)


def version() -> str:
    """The installed version of the auditor."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("automaton-auditor")
    except PackageNotFoundError:
        return "unknown"


class DefaultGroup(TyperGroup):
    """A group whose unknown first argument (a target, or an option of the default command)
    falls through to the default command."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Insert the default command's name unless a subcommand, help or the version is
        asked for."""
        if args and args[0] in VERSION_OPTIONS:
            typer.echo(f"audit (automaton-auditor) {version()}")
            ctx.exit(0)
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = [DEFAULT_COMMAND, *args]
        return super().parse_args(ctx, args)


app = typer.Typer(cls=DefaultGroup, add_completion=False, no_args_is_help=True,
                  pretty_exceptions_enable=False, help=APP_HELP, options_metavar="",
                  context_settings={"help_option_names": ["-h", "--help"]},
                  subcommand_metavar="[run] TARGET REPORT [OPTIONS] | COMMAND [ARGS]...")
app.command(DEFAULT_COMMAND)(audit)
app.command("batch")(batch)
app.command("diff")(diff)
app.command("worker")(worker)
app.command("resume")(resume)
app.command("replay")(replay)
app.command("runs")(runs)
app.command("config")(config)
app.add_typer(cache_app, name="cache")


def _kind(exc: BaseException) -> str:
    """Which of Click's exceptions `exc` is (Typer vendors Click: matched by class name)."""
    names = {c.__name__ for c in type(exc).__mro__}
    for kind in ("NoArgsIsHelpError", "UsageError", "ClickException"):
        if kind in names:
            return kind
    return ""


def _report(exc: Exception) -> int:
    """Print a Click exception the way the contract says; return its exit code."""
    kind = _kind(exc)
    message = exc.format_message()  # type: ignore[attr-defined]
    if kind == "NoArgsIsHelpError":  # `audit` or `audit cache` alone: the help, as before
        sys.stderr.write(message + "\n")
        return ExitCode.INPUT
    if kind == "UsageError":
        ctx = getattr(exc, "ctx", None)
        command = ctx.command_path if ctx is not None else "audit"
        sys.stderr.write(error_line(f"{message} (see `{command} --help`)") + "\n")
        return ExitCode.INPUT
    sys.stderr.write(error_line(message) + "\n")
    return int(getattr(exc, "exit_code", 1))


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: the conventions above, then the command's exit code.
    Every child process the audit starts is killed on the way out, whichever it is
    (`automaton_auditor.containment`), Ctrl-C included."""
    from automaton_auditor import containment

    containment.install_signal_handlers()  # SIGTERM, SIGHUP, SIGQUIT
    install_sigint(lambda: containment.kill_all(close=True))
    try:
        code = _run(argv)
    finally:
        containment.kill_all(close=True)
    if code == ExitCode.INTERRUPTED:
        if not said_error():  # Typer turned Ctrl-C into exit 130
            sys.stderr.write(stop_line() + "\n")
        code = interrupted_code()  # 143 when SIGTERM took Ctrl-C's path (129, 131: HUP, QUIT)
    sys.exit(int(code or 0))


def _run(argv: list[str] | None) -> int:
    """The command's exit code, with Click's exceptions and Ctrl-C turned into one line."""
    try:
        code = app(args=argv, prog_name="audit", standalone_mode=False)
    except (typer.Abort, KeyboardInterrupt):
        code = _interrupted()
    except Exception as exc:
        if is_interrupt(exc):
            code = _interrupted()
        elif _kind(exc):
            code = _report(exc)
        else:
            raise
    return int(code or 0)


def _interrupted() -> int:
    """Ctrl-C (or SIGTERM, which takes its path) reached the top: one line, noted so the
    exit path does not print it again."""
    if not said_error():
        sys.stderr.write(stop_line() + "\n")
        note_error()
    return ExitCode.INTERRUPTED
