"""`audit TARGET REPORT` (the default command, `run`): one audit; and `audit config`, which
prints the settings such a run would use and where each value came from.

Heavy modules (pydantic, LangGraph, docling) are imported inside the commands, so
`audit --help` and argument errors answer fast. Option defaults are None ("not given"): the
defaults live once, in `automaton_auditor.settings`, under the config file and environment.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated, Any

import typer

from automaton_auditor.cli.errors import fail, finish
from automaton_auditor.cli.flags import score_bound
from automaton_auditor.exits import ExitCode

SEE_CONFIG = " (default and config: `audit config`)"


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
    report: Annotated[Path, typer.Argument(
        help="The architecture report (PDF; DOCX, HTML and Markdown are read too).")],
    rubric: Annotated[Path | None, typer.Option(
        help="Rubric JSON (default: the embedded rubric).")] = None,
    output_dir: Annotated[Path | None, typer.Option(
        help="Where reports are written" + SEE_CONFIG + ".")] = None,
    model: Annotated[str | None, typer.Option(
        help="Judge model, openai:MODEL or azure_openai:DEPLOYMENT, e.g. openai:gpt-4o-mini "
             "(env AUDITOR_MODEL; OPENAI_BASE_URL for an OpenAI-compatible server). "
             "Without one, the offline bench judges.")] = None,
    vision_model: Annotated[str | None, typer.Option(
        help="Vision-capable model for diagrams (env AUDITOR_VISION_MODEL).")] = None,
    allow_host: Annotated[list[str] | None, typer.Option(
        help="Extra git host to allow (repeatable; env AUDITOR_ALLOWED_HOSTS).")] = None,
    depth: Annotated[int | None, typer.Option(
        min=1, help="Clone depth (default: full history, which git forensics needs).")] = None,
    max_concurrency: Annotated[int | None, typer.Option(
        min=1, help="Parallel node limit" + SEE_CONFIG + ".")] = None,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print only the JSON report on stdout.")] = False,
    fail_under: Annotated[float | None, typer.Option(
        min=0, max=5, callback=score_bound,
        help="Exit 1 when the overall score is below this.")] = None,
    fail_on: Annotated[list[str] | None, typer.Option(
        help="Exit 1 when a criterion scores below N or is not judged: CRITERION<N "
             "(repeatable), e.g. --fail-on 'safe_tool_engineering<3'.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
    persona_model: Annotated[list[str] | None, typer.Option(
        help="Model for one persona, e.g. Prosecutor=openai:gpt-4o (repeatable).")] = None,
    structured_output_method: Annotated[str | None, typer.Option(
        help="json_schema, function_calling or json_mode (default: per provider).")] = None,
    call_timeout: Annotated[float | None, typer.Option(
        min=1, help="Seconds before a judge call times out (it is then retried)"
                    + SEE_CONFIG + ".")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print the planned judge calls and a token estimate; call nothing.")
    ] = False,
    ocr: Annotated[bool, typer.Option(
        "--ocr", help="Read a report with no text layer (a scan) by offline OCR; needs the "
                      "'ocr' extra (`uv sync --extra ocr`; env AUDITOR_OCR).")] = False,
    no_cache: Annotated[bool, typer.Option(
        "--no-cache", help="Neither read nor write the caches (env AUDITOR_CACHE_DIR sets "
                           "where they live).")] = False,
    reuse_opinions: Annotated[bool, typer.Option(
        "--reuse-opinions", help="Reuse cached model answers to identical judge prompts.")
    ] = False,
    show_settings: Annotated[bool, typer.Option(
        "--show-settings", help="Print the effective settings and where each came from; "
                                "audit nothing.")] = False,
    output_format: Annotated[str | None, typer.Option(
        "--format", help="What to print on stdout: text (summary table), json (the report) or "
                         "sarif (SARIF 2.1.0).")] = None,
    sarif: Annotated[Path | None, typer.Option(
        help="Also write the failure facts as SARIF 2.1.0 to this file.")] = None,
    baseline: Annotated[Path | None, typer.Option(
        help="A report.json to compare with: exit 1 on a regression (see `audit diff`).")
    ] = None,
) -> None:
    """Audit TARGET (repository URL or path) and REPORT (its architecture report)."""
    import logging

    from automaton_auditor import service
    from automaton_auditor.cli import outputs
    from automaton_auditor.cli.flags import (
        check_models,
        outside_target,
        resolve_from_flags,
        writable_cache,
    )

    flags = {"output_dir": output_dir, "rubric_path": rubric, "model": model,
             "vision_model": vision_model, "allowed_hosts": allow_host, "clone_depth": depth,
             "max_concurrency": max_concurrency, "persona_models": persona_model,
             "structured_output_method": structured_output_method,
             "call_timeout_s": call_timeout, "no_cache": no_cache,
             "reuse_opinions": reuse_opinions, "ocr": ocr}
    resolved = resolve_from_flags({k: str(v) if isinstance(v, Path) else v
                                   for k, v in flags.items()}, [target])
    if show_settings:
        from automaton_auditor.settings.layers import show_settings as render

        typer.echo(render(resolved))
        raise typer.Exit(ExitCode.OK)
    settings = outside_target(resolved, target)
    # before the rubric, the dry run and any clone: a run that could not write its report
    # is refused at once (exit 2), not after the whole audit (exit 3)
    outputs.check_output_dir(Path(settings.output_dir))
    logging.basicConfig(level=logging.CRITICAL)
    settings = writable_cache(settings)
    try:
        loaded = service.load_rubric_or_refuse(target, str(report), settings)
        gates = service.Gates(fail_under, service.parse_fail_on(
            fail_on or [], [d.id for d in loaded.dimensions]))
    except (service.RubricRefused, ValueError) as exc:
        raise fail(str(exc), ExitCode.INPUT) from None
    if dry_run:
        from automaton_auditor.judging.llm_plan import render_plan

        typer.echo(render_plan(loaded, settings))
        raise typer.Exit(ExitCode.OK)
    check_models(settings)
    printed = outputs.check_format(output_format, json_output)
    outputs.check_sarif_path(sarif)
    base = outputs.load_baseline(baseline)
    progress, on_update = progress_callback(quiet or printed != "text",
                                            3 * len(loaded.dimensions))
    with progress:
        outcome = service.run_audit(target, str(report), loaded, settings, gates=gates,
                                    on_update=on_update)
    outputs.write_sarif(outcome, sarif)
    outcome = outputs.apply_baseline(outcome, base, str(baseline))
    finish(outcome, printed == "json", quiet, sarif_output=printed == "sarif")


# Options of `audit run` that are not settings: `audit config` does not take them.
_RUN_ONLY = ("json_output", "fail_under", "fail_on", "quiet", "dry_run", "show_settings",
             "output_format", "sarif", "baseline")


def config(**options: Any) -> None:
    """Print the effective settings and where each value came from (default, config file,
    .env, environment variable or flag). Takes the same setting options as `audit run`; give
    TARGET to see what a run on it would use (settings are never read from inside a local
    target)."""
    target = options.pop("target", None)
    report = options.pop("report", None)
    audit(target=target or "", report=report or Path(), show_settings=True,
          **{k: v for k, v in options.items() if k not in _RUN_ONLY})


def _config_signature() -> inspect.Signature:
    """`audit run`'s setting options, with TARGET and REPORT optional."""
    params = []
    for param in inspect.signature(audit, eval_str=True).parameters.values():
        if param.name in _RUN_ONLY:
            continue
        if param.name in ("target", "report"):
            base = str if param.name == "target" else Path
            param = param.replace(annotation=Annotated[base | None, typer.Argument(
                help="Target (and report) the settings are for (optional).")], default=None)
        params.append(param)
    return inspect.Signature(params)


config.__signature__ = _config_signature()  # type: ignore[attr-defined]
config.__annotations__ = {p.name: p.annotation for p in config.__signature__.parameters.values()}  # type: ignore[attr-defined]
