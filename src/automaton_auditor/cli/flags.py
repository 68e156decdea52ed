"""Run settings from command-line flags layered over the config file and the environment
(`automaton_auditor.settings.resolve_settings`), with the judges' models checked."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import typer

from automaton_auditor.cli.errors import fail
from automaton_auditor.exits import ExitCode, warning_line

if TYPE_CHECKING:
    from automaton_auditor.settings import Settings
    from automaton_auditor.settings.layers import Resolved


def score_bound(value: float | None) -> float | None:
    """`--fail-under`'s check beyond Typer's 0..5 range: NaN passes that range (every
    comparison with NaN is false), and then the gate never fires; refused as a usage error."""
    if value is not None and math.isnan(value):
        raise typer.BadParameter(f"{value} is not a number between 0 and 5")
    return value


def resolve_from_flags(flags: dict[str, Any], targets: Sequence[str] = ()) -> Resolved:
    """The run's layered settings (flags given as field → value; None means "not given"),
    with the judges' models checked: every persona needs one, or none does. A bad value
    ends the command with one `error:` line and exit 2."""
    from automaton_auditor.settings.layers import SettingsError, resolve_settings

    given = {k: v for k, v in flags.items() if v is not None and v != [] and v is not False}
    if "persona_models" in given:
        given["persona_models"] = _personas(given["persona_models"])
    try:
        resolved = resolve_settings(given, targets=targets)
    except SettingsError as exc:
        raise fail(str(exc), ExitCode.INPUT) from None
    settings = resolved.settings
    if settings.offline:
        return resolved  # the offline bench: no LangChain import on the fast path
    from automaton_auditor.judging.llm_plan import PERSONA_ALIASES, missing_models

    unknown = [p for p in settings.persona_models if p not in PERSONA_ALIASES.values()]
    if unknown:
        raise fail(f"persona_models: unknown persona {unknown[0]!r} (Prosecutor, Defense or "
                   "TechLead)", ExitCode.INPUT)
    missing = missing_models(settings)
    if missing:
        raise fail(f"no model for {', '.join(missing)}: give --model (or AUDITOR_MODEL) or a "
                   "--persona-model for every persona", ExitCode.INPUT)
    return resolved


def _personas(values: list[str]) -> dict[str, str]:
    from automaton_auditor.judging.llm_plan import parse_persona_models

    try:
        return parse_persona_models(values)
    except ValueError as exc:
        raise fail(str(exc), ExitCode.INPUT) from None


# The environment variable each provider's client needs (`judging.models.OPENAI_SDK`).
PROVIDER_KEYS = {"openai": "OPENAI_API_KEY", "azure_openai": "AZURE_OPENAI_API_KEY"}


def check_models(settings: Settings) -> None:
    """Every configured model is of a supported provider, can be built and has its provider's
    key, checked before any work and without a network call: an unsupported provider or a
    missing key is exit 2, never a silent fall-back to degraded opinions."""
    import os

    names = sorted(n for n in {settings.model, settings.vision_model,
                                *settings.persona_models.values()} if n)
    if not names:
        return
    from automaton_auditor.judging.models import (
        UnsupportedProvider,
        build_chat_model,
        check_provider,
        provider_of,
    )

    for name in names:
        try:  # before the key: a provider's key is no use if the provider is refused
            check_provider(name)
        except UnsupportedProvider as exc:
            raise fail(f"model {name} cannot be used: {exc}", ExitCode.INPUT) from None
        key = PROVIDER_KEYS.get(provider_of(name))
        if key and not os.environ.get(key, "").strip():
            raise fail(f"model {name}: {key} is not set (environment or the invoking "
                       "project's .env)", ExitCode.INPUT)
        try:
            build_chat_model(name, settings)
        except Exception as exc:  # a missing integration package, a bad option
            raise fail(f"model {name} cannot be used: {type(exc).__name__}: {exc}",
                       ExitCode.INPUT) from None


def outside_target(resolved: Resolved, target: str) -> Settings:
    """The run's settings with the output folder moved out of a local target when it is the
    default: the auditor never writes into the audited repository unless told to (a flag,
    AUDITOR_OUTPUT_DIR or the config file)."""
    import os
    from pathlib import Path

    settings = resolved.settings
    # realpath, not Path.resolve: a symlink loop there is refused by `check_output_dir`
    # with one line, never a RuntimeError traceback
    out = Path(os.path.realpath(settings.output_dir))
    inside = [Path(s) for s in resolved.skipped if out == Path(s) or Path(s) in out.parents]
    if not inside or resolved.origins["output_dir"].layer != "default":
        return settings
    from platformdirs import user_data_dir

    moved = Path(user_data_dir("automaton-auditor")) / settings.output_dir
    typer.echo(warning_line(f"{out} is inside the audited repository: reports go to {moved} "
                            "(give --output-dir to choose)"), err=True)
    return settings.model_copy(update={"output_dir": str(moved)})


def writable_cache(settings: Settings) -> Settings:
    """The settings with a cache directory that can be written: one that cannot (a read-only
    HOME in CI, a HOME that does not exist) must not fail the audit or the batch, and the
    user's fallback cache replaces it, with a warning line."""
    import os
    import tempfile
    from pathlib import Path

    from automaton_auditor.storage.kv import CACHE_ENV, fallback_cache_dir, make_cache_dir

    if settings.cache_dir is None:
        return settings
    try:
        make_cache_dir(Path(settings.cache_dir))
        with tempfile.TemporaryFile(dir=settings.cache_dir):
            return settings
    except OSError as exc:
        fallback = str(fallback_cache_dir())  # one per user, reused: no folder leaked per run
        os.environ[CACHE_ENV] = fallback  # for what reads the environment (run checkpoints)
        typer.echo(warning_line(f"cache directory {settings.cache_dir} is not writable "
                                f"({exc.strerror}); using {fallback}"), err=True)
        return settings.model_copy(update={"cache_dir": fallback})
