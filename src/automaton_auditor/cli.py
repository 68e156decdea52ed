"""`audit TARGET REPORT`: the command line around the compiled courtroom graph.

Heavy modules (LangGraph, docling) are imported inside the command, so `audit --help` and
argument errors answer fast.

Exit codes: 0 done · 1 overall score below --fail-under · 2 usage or input error ·
3 the audit failed (repository not acquired, judges stopped, internal error).
"""

from __future__ import annotations

import logging
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from automaton_auditor.commands import APP_HELP, DefaultGroup, register

if TYPE_CHECKING:
    from automaton_auditor.config import Settings

EXIT_OK, EXIT_FAIL_UNDER, EXIT_INPUT, EXIT_FAILED = 0, 1, 2, 3

app = typer.Typer(cls=DefaultGroup, add_completion=False, no_args_is_help=True,
                  pretty_exceptions_enable=False, help=APP_HELP, options_metavar="",
                  subcommand_metavar="[run] TARGET REPORT [OPTIONS] | COMMAND [ARGS]...")


def _fail(message: str, code: int) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _settings(output_dir: Path, rubric: Path | None, model: str | None,
              allow_host: list[str], depth: int | None, max_concurrency: int,
              vision_model: str | None, persona_models: dict[str, str] | None = None,
              structured_output_method: str | None = None) -> Settings:
    from automaton_auditor.config import (
        DEFAULT_ALLOWED_HOSTS,
        Settings,
        env_model,
        extra_allowed_hosts,
    )

    hosts = tuple(dict.fromkeys([*DEFAULT_ALLOWED_HOSTS, *extra_allowed_hosts(),
                                 *(h.lower() for h in allow_host)]))
    return Settings(output_dir=str(output_dir), rubric_path=str(rubric) if rubric else None,
                    model=model or env_model(), allowed_hosts=hosts, clone_depth=depth,
                    max_concurrency=max_concurrency, vision_model=vision_model,
                    persona_models=persona_models or {},
                    structured_output_method=structured_output_method)


def _bench_settings(output_dir: Path, rubric: Path | None, model: str | None,
                    allow_host: list[str], depth: int | None, max_concurrency: int,
                    vision_model: str | None, persona_model: list[str],
                    method: str | None) -> Settings:
    """Settings with the judges' models checked: every persona needs one, or none does."""
    from automaton_auditor.config import env_model

    if model is None and not persona_model and method is None and env_model() is None:
        # The offline bench: nothing to check, and no LangChain import on the fast path.
        return _settings(output_dir, rubric, model, allow_host, depth, max_concurrency,
                         vision_model)
    from automaton_auditor.judging.llm_plan import missing_models, parse_persona_models
    from automaton_auditor.judging.models import STRUCTURED_METHODS

    if method is not None and method not in STRUCTURED_METHODS:
        raise _fail(f"--structured-output-method must be one of {', '.join(STRUCTURED_METHODS)}",
                    EXIT_INPUT)
    try:
        personas = parse_persona_models(persona_model)
    except ValueError as exc:
        raise _fail(str(exc), EXIT_INPUT) from None
    settings = _settings(output_dir, rubric, model, allow_host, depth, max_concurrency,
                         vision_model, personas, method)
    missing = missing_models(settings)
    if missing:
        raise _fail(f"no model for {', '.join(missing)}: give --model (or AUDITOR_MODEL) or a "
                    "--persona-model for every persona", EXIT_INPUT)
    return settings


def _write_error_report(target: str, report: Path, settings: Settings, message: str) -> None:
    """A rubric problem stops the run before the graph; still leave a report saying why."""
    from automaton_auditor.nodes.report import report_writer

    report_writer({"target": target, "report_path": str(report),
                   "settings": settings.to_state(), "input_ok": False,
                   "input_error": message, "errors": [f"input: {message}"]})


def _reject_bad_input(state: dict[str, Any]) -> dict[str, Any] | None:
    """Validate the inputs before anything heavy is imported: bad input answers fast, with
    the same one-line error and partial report the graph's error path gives."""
    from automaton_auditor.nodes.context import context_builder
    from automaton_auditor.nodes.report import report_writer

    checked = {**state, **context_builder(state)}  # type: ignore[arg-type]
    if checked["input_ok"]:
        return None
    checked.update(report_writer(checked))  # type: ignore[arg-type]
    return checked


def _run_graph(state: dict[str, Any], settings: Settings, quiet: bool,
               judge_calls: int, run_id: str, resume: bool = False) -> dict[str, Any]:
    """Run the audit `run_id` (checkpointed), or resume it when `resume` (then `state` is the
    checkpointed state, used only to name the trace)."""
    from rich.console import Console

    from automaton_auditor.console import RunProgress
    from automaton_auditor.judging.llm_plan import trace_config
    from automaton_auditor.runs import stream_audit

    timings: dict[str, float] = {}
    # run_name/tags/metadata name the audit's root run when LangSmith tracing is on.
    trace = trace_config(state["target"], state["report_path"], settings)
    with RunProgress(Console(stderr=True), judge_calls, enabled=not quiet) as progress:

        def on_update(node: str, update: Any) -> None:
            if isinstance(update, dict):
                timings.update(update.get("timings") or {})
            progress.node_done(node, update, timings)

        return stream_audit(None if resume else state, settings, run_id, trace, on_update)


def _run_or_fail(state: dict[str, Any], settings: Settings, quiet: bool, judge_calls: int,
                 run_id: str, resume: bool = False) -> dict[str, Any]:
    """`_run_graph`, with a crash or Ctrl-C turned into one line that says how to resume."""
    try:
        return _run_graph(state, settings, quiet, judge_calls, run_id, resume)
    except KeyboardInterrupt:
        raise _fail(f"interrupted; resume with: audit resume {run_id}", 130) from None
    except Exception as exc:  # the graph degrades internally; this is the last line of defence
        raise _fail(f"audit failed: {type(exc).__name__}: {exc} (resume with: audit resume "
                    f"{run_id})", EXIT_FAILED) from None


def _exit_code(final: dict[str, Any], fail_under: float | None) -> int:
    report = final.get("final_report")
    if not final.get("input_ok"):
        return EXIT_INPUT
    statuses = (final.get("detective_status") or {}).values()
    if final.get("aborted") or any(str(s).startswith("failed") for s in statuses):
        return EXIT_FAILED
    if fail_under is not None and report is not None and report.overall_score < fail_under:
        return EXIT_FAIL_UNDER
    return EXIT_OK


@app.command("run")
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
    from automaton_auditor.cache import default_cache_dir
    from automaton_auditor.config import load_dotenv_if_present
    from automaton_auditor.runs import new_run_id

    load_dotenv_if_present()
    logging.basicConfig(level=logging.CRITICAL)
    settings = _bench_settings(output_dir, rubric, model, allow_host, depth, max_concurrency,
                               vision_model, persona_model, structured_output_method)
    settings = replace(settings, call_timeout_s=call_timeout, reuse_opinions=reuse_opinions,
                       cache_dir=None if no_cache else str(default_cache_dir()))
    from automaton_auditor.rubric import RubricError, load_rubric

    try:
        loaded = load_rubric(rubric)
    except RubricError as exc:
        _write_error_report(target, report, settings, f"bad rubric: {exc}")
        raise _fail(f"bad rubric: {exc}", EXIT_INPUT) from None
    if dry_run:
        from automaton_auditor.judging.llm_plan import render_plan

        typer.echo(render_plan(loaded, settings))
        raise typer.Exit(EXIT_OK)
    from automaton_auditor import cache_results

    rubric_data = loaded.model_dump()
    rejected = _reject_bad_input({"target": target, "report_path": str(report),
                                  "rubric": rubric_data, "settings": settings.to_state()})
    if rejected is not None:
        _finish(rejected, json_output, quiet, fail_under)
    # An unchanged deterministic audit is answered from its finished run (no graph at all).
    final = cache_results.reuse(target, str(report), rubric_data, settings)
    if final is None:
        from automaton_auditor import cache_prefetch
        from automaton_auditor.rubric import concept_terms

        # The report is read in a second process while this one starts the graph.
        cache_prefetch.prefetch_report(str(report), concept_terms(loaded), settings)
        run_id = new_run_id()
        state = {"target": target, "report_path": str(report), "rubric": rubric_data,
                 "settings": settings.to_state(), "run_id": run_id}
        try:
            final = _run_or_fail(state, settings, quiet or json_output,
                                 3 * len(loaded.dimensions), run_id)
        finally:
            cache_prefetch.cancel_all()
        cache_results.remember(final, rubric_data, settings)
    _finish(final, json_output, quiet, fail_under)


def _finish(final: dict[str, Any], json_output: bool, quiet: bool,
            fail_under: float | None) -> None:
    report = final.get("final_report")
    code = _exit_code(final, fail_under)
    if json_output and report is not None:
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
    elif not quiet and report is not None and report.criteria:
        from rich.console import Console

        from automaton_auditor.console import summary_table

        Console().print(summary_table(report))
    files = final.get("report_files") or {}
    if code == EXIT_INPUT:
        where = f" (details in {files['markdown']})" if files.get("markdown") else ""
        raise _fail(f"{final.get('input_error') or 'invalid input'}{where}", code)
    if files and not json_output and not quiet:
        run = f" (run {final['run_id']})" if final.get("run_id") else ""
        typer.echo(f"report: {files.get('markdown')}{run}", err=True)
    if code == EXIT_FAILED:
        statuses = final.get("detective_status") or {}
        reason = final.get("aborted") or "; ".join(
            f"{k} {v}" for k, v in sorted(statuses.items()) if str(v).startswith("failed"))
        raise _fail(f"audit failed: {reason} (partial report written)", code)
    if code == EXIT_FAIL_UNDER and report is not None:
        typer.echo(f"overall score {report.overall_score:.2f} is below --fail-under "
                   f"{fail_under}", err=True)
    raise typer.Exit(code)


register(app)


def main() -> None:
    """Console-script entry point."""
    app()
