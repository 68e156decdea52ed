"""`audit TARGET REPORT` (the default command, `run`): one audit.

Heavy modules (LangGraph, docling) are imported inside the command, so `audit --help` and
argument errors answer fast.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from automaton_auditor.cli.errors import fail, finish
from automaton_auditor.exits import ExitCode


def progress_callback(quiet: bool, judge_calls: int) -> tuple[Any, Any]:
    """A Rich progress display on stderr and the `on_update` callback that feeds it."""
    from rich.console import Console

    from automaton_auditor.cli.console import RunProgress

    timings: dict[str, float] = {}
    progress = RunProgress(Console(stderr=True), judge_calls, enabled=not quiet)

    def on_update(node: str, update: Any) -> None:
        if isinstance(update, dict):
            timings.update(update.get("timings") or {})
        progress.node_done(node, update, timings)

    return progress, on_update


def audit(
    target: Annotated[str, typer.Argument(help="https URL of a git repository, or a local path.")],
    report: Annotated[Path, typer.Argument(help="The architecture report (PDF).")],
    rubric: Annotated[Path | None, typer.Option(help="Rubric JSON (default: embedded).")] = None,
    output_dir: Annotated[Path, typer.Option(help="Where reports are written.")] = Path("audit"),
    model: Annotated[str | None, typer.Option(
        help="Judge model for init_chat_model, e.g. openai:gpt-4o-mini (env AUDITOR_MODEL). "
             "Without one, the offline bench judges.")] = None,
    vision_model: Annotated[str | None, typer.Option(
        help="Vision-capable model for diagrams (env AUDITOR_VISION_MODEL).",
        envvar="AUDITOR_VISION_MODEL")] = None,
    allow_host: Annotated[list[str], typer.Option(
        help="Extra git host to allow (repeatable).")] = [],  # noqa: B006 - Typer needs a literal
    depth: Annotated[int | None, typer.Option(help="Clone depth (default: full history).")] = None,
    max_concurrency: Annotated[int, typer.Option(min=1, help="Parallel node limit.")] = 8,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print only the JSON report on stdout.")] = False,
    fail_under: Annotated[float | None, typer.Option(
        min=0, max=5, help="Exit 1 when the overall score is below this.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
    persona_model: Annotated[list[str], typer.Option(
        help="Model for one persona, e.g. Prosecutor=openai:gpt-4o (repeatable).")] = [],  # noqa: B006
    structured_output_method: Annotated[str | None, typer.Option(
        help="json_schema, function_calling or json_mode (default: per provider).")] = None,
    call_timeout: Annotated[float, typer.Option(
        min=1, help="Seconds before a judge call times out (it is then retried).")] = 120.0,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print the planned judge calls and a token estimate; call nothing.")
    ] = False,
    no_cache: Annotated[bool, typer.Option(
        "--no-cache", help="Neither read nor write the caches (env AUDITOR_CACHE_DIR sets "
                           "where they live).")] = False,
    reuse_opinions: Annotated[bool, typer.Option(
        "--reuse-opinions", help="Reuse cached model answers to identical judge prompts.")
    ] = False,
) -> None:
    """Audit TARGET (repository URL or path) and REPORT (its architecture PDF)."""
    from automaton_auditor import service
    from automaton_auditor.cli.flags import settings_from_flags
    from automaton_auditor.settings import load_dotenv_if_present
    from automaton_auditor.storage.kv import default_cache_dir

    load_dotenv_if_present()
    logging.basicConfig(level=logging.CRITICAL)
    settings = settings_from_flags(output_dir, rubric, model, allow_host, depth,
                                   max_concurrency, vision_model, persona_model,
                                   structured_output_method)
    settings = replace(settings, call_timeout_s=call_timeout, reuse_opinions=reuse_opinions,
                       cache_dir=None if no_cache else str(default_cache_dir()))
    try:
        loaded = service.load_rubric_or_refuse(target, str(report), settings)
    except service.RubricRefused as exc:
        raise fail(str(exc), ExitCode.INPUT) from None
    if dry_run:
        from automaton_auditor.judging.llm_plan import render_plan

        typer.echo(render_plan(loaded, settings))
        raise typer.Exit(ExitCode.OK)
    progress, on_update = progress_callback(quiet or json_output, 3 * len(loaded.dimensions))
    with progress:
        outcome = service.run_audit(target, str(report), loaded, settings,
                                    fail_under=fail_under, on_update=on_update)
    finish(outcome, json_output, quiet)
