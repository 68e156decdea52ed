"""Run settings from command-line flags and the environment, with the judges' models checked."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.cli.errors import fail
from automaton_auditor.exits import ExitCode
from automaton_auditor.settings import (
    DEFAULT_ALLOWED_HOSTS,
    Settings,
    env_model,
    extra_allowed_hosts,
)


def _settings(output_dir: Path, rubric: Path | None, model: str | None,
              allow_host: list[str], depth: int | None, max_concurrency: int,
              vision_model: str | None, persona_models: dict[str, str] | None = None,
              structured_output_method: str | None = None) -> Settings:
    hosts = tuple(dict.fromkeys([*DEFAULT_ALLOWED_HOSTS, *extra_allowed_hosts(),
                                 *(h.lower() for h in allow_host)]))
    return Settings(output_dir=str(output_dir), rubric_path=str(rubric) if rubric else None,
                    model=model or env_model(), allowed_hosts=hosts, clone_depth=depth,
                    max_concurrency=max_concurrency, vision_model=vision_model,
                    persona_models=persona_models or {},
                    structured_output_method=structured_output_method)


def settings_from_flags(output_dir: Path, rubric: Path | None, model: str | None,
                        allow_host: list[str], depth: int | None, max_concurrency: int,
                        vision_model: str | None, persona_model: list[str],
                        method: str | None) -> Settings:
    """Settings with the judges' models checked: every persona needs one, or none does."""
    if model is None and not persona_model and method is None and env_model() is None:
        # The offline bench: nothing to check, and no LangChain import on the fast path.
        return _settings(output_dir, rubric, model, allow_host, depth, max_concurrency,
                         vision_model)
    from automaton_auditor.judging.llm_plan import missing_models, parse_persona_models
    from automaton_auditor.judging.models import STRUCTURED_METHODS

    if method is not None and method not in STRUCTURED_METHODS:
        raise fail(f"--structured-output-method must be one of {', '.join(STRUCTURED_METHODS)}",
                   ExitCode.INPUT)
    try:
        personas = parse_persona_models(persona_model)
    except ValueError as exc:
        raise fail(str(exc), ExitCode.INPUT) from None
    settings = _settings(output_dir, rubric, model, allow_host, depth, max_concurrency,
                         vision_model, personas, method)
    missing = missing_models(settings)
    if missing:
        raise fail(f"no model for {', '.join(missing)}: give --model (or AUDITOR_MODEL) or a "
                   "--persona-model for every persona", ExitCode.INPUT)
    return settings
