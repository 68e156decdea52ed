"""Run settings from command-line flags layered over the config file and the environment
(`automaton_auditor.settings.resolve_settings`), with the judges' models checked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from automaton_auditor.cli.errors import fail
from automaton_auditor.exits import ExitCode

if TYPE_CHECKING:
    from automaton_auditor.settings.layers import Resolved


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
