"""Layered settings: defaults < config file < `.env` < ``AUDITOR_*`` < flags, each value with
its origin (`audit config`), and never anything read from inside the audit target."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from automaton_auditor.safefile import (
    MAX_NESTING,
    UnsafeFile,
    UnsafeJson,
    is_regular,
    json_problem,
    loads_untrusted,
    read_bounded_text,
)
from automaton_auditor.settings import ENV_PREFIX, Settings, default, redact_url, split_hosts

APP_NAME = "automaton-auditor"
CONFIG_FILE = "auditor.toml"
PYPROJECT_TABLE = "automaton-auditor"
# A config file larger than this is refused unread (it is a few lines of TOML).
MAX_CONFIG_BYTES = 1_000_000


class SettingsError(ValueError):
    """A setting that cannot be used; the message is one line naming where it came from."""


@dataclass(frozen=True)
class Origin:
    """Where one value came from."""

    layer: Literal["default", "file", "dotenv", "env", "flag"]
    detail: str = ""

    def __str__(self) -> str:
        return self.layer if not self.detail else f"{self.layer} {self.detail}"


@dataclass(frozen=True)
class Resolved:
    """The effective settings, each value's origin, and the files that were read."""

    settings: Settings
    origins: dict[str, Origin]
    config_file: Path | None = None
    dotenv_file: Path | None = None
    skipped: tuple[str, ...] = field(default_factory=tuple)


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def _local_roots(targets: Sequence[str], base: Path) -> list[Path]:
    """The local targets among `targets` (relative to `base`), resolved: settings never come
    from inside one."""
    roots = []
    for target in targets:
        if not target or "://" in target or target.startswith("git@"):
            continue
        try:
            path = (base / Path(target).expanduser()).resolve()
        except (OSError, RuntimeError):
            continue
        if path.is_dir():
            roots.append(path)
    return roots


def _has_table(pyproject: Path) -> bool:
    return is_regular(pyproject) and f"[tool.{PYPROJECT_TABLE}" in _read_small(pyproject)


def _read_small(path: Path) -> str:
    """A config file's text: a regular file, at most MAX_CONFIG_BYTES, UTF-8."""
    try:
        return read_bounded_text(path, MAX_CONFIG_BYTES, "config file")
    except UnsafeFile as exc:
        raise SettingsError(str(exc)) from None


def user_config_dir() -> Path:
    """Where user-wide settings live (``~/.config/automaton-auditor`` on Linux)."""
    from platformdirs import user_config_dir as platform_config_dir

    return Path(platform_config_dir(APP_NAME))


def find_project(cwd: Path, exclude: Sequence[Path] = ()) -> tuple[Path | None, Path | None]:
    """The config file and `.env` of the invoking project: from `cwd` upward, the first
    folder holding ``auditor.toml``, a ``pyproject.toml`` or a ``.env``; the walk stops at a
    VCS root (a folder with ``.git`` or ``.hg``). A folder inside an excluded path (the
    audit's local targets) is never used. Without a project, the user config directory."""
    chosen: Path | None = None
    dotenv: Path | None = None
    folder: Path | None = cwd.resolve()
    while folder is not None:
        if not _inside(folder, exclude):
            config, pyproject = folder / CONFIG_FILE, folder / "pyproject.toml"
            if config.exists() or pyproject.exists() or (folder / ".env").exists():
                chosen = config if config.exists() else pyproject if _has_table(pyproject) \
                    else None
                dotenv = folder / ".env" if is_regular(folder / ".env") else None
                break
        if (folder / ".git").exists() or (folder / ".hg").exists():
            break
        folder = folder.parent if folder.parent != folder else None
    user = user_config_dir()
    if not _inside(user, exclude):
        if chosen is None and (user / CONFIG_FILE).exists():
            chosen = user / CONFIG_FILE
        if dotenv is None and is_regular(user / ".env"):
            dotenv = user / ".env"
    return chosen, dotenv


def _key(name: str, where: str) -> str:
    key = name.replace("-", "_").lower()
    key = Settings.ALIASES.get(key, key)
    if key not in Settings.model_fields:
        raise SettingsError(f"{where}: unknown setting {name!r} (see `audit config`)")
    return key


def read_config_file(path: Path) -> dict[str, Any]:
    """The settings a config file sets (``[tool.automaton-auditor]`` of a pyproject.toml,
    the whole of an auditor.toml), with keys as field names."""
    import tomllib

    try:
        data = tomllib.loads(_read_small(path))
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML ({exc})") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise SettingsError(f"{path}: nested deeper than {MAX_NESTING} levels") from None
    if problem := json_problem(data):  # the rubric's rule: settings are a few flat lines
        raise SettingsError(f"{path}: {problem}")
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        if not isinstance(tool, dict):  # `tool = 5`: valid TOML, no table to look into
            raise SettingsError(f"{path}: tool is not a table")
        data = tool.get(PYPROJECT_TABLE, {})
        where = f"{path} [tool.{PYPROJECT_TABLE}]"
    else:
        where = str(path)
    if not isinstance(data, dict):
        raise SettingsError(f"{where}: expected a table of settings")
    return {_key(k, where): v for k, v in data.items()}


def _dotenv_values(path: Path) -> dict[str, str]:
    from dotenv import dotenv_values

    _read_small(path)  # regular file, bounded
    return {k: v for k, v in dotenv_values(path).items() if v is not None}


def _env_layer(environ: Mapping[str, str]) -> dict[str, Any]:
    """The AUDITOR_* variables of `environ` that name a setting, read by pydantic-settings
    (JSON for the dict and list values, a comma list for the hosts)."""
    from pydantic_settings import EnvSettingsSource
    from pydantic_settings.exceptions import SettingsError as SourceError

    ours = {k: v for k, v in environ.items() if k.upper().startswith(ENV_PREFIX)}
    if not ours:
        return {}
    for key, value in ours.items():  # the dict and list values are JSON from anyone
        if value.lstrip()[:1] in ("[", "{"):
            try:
                loads_untrusted(value)
            except UnsafeJson as exc:  # too deep: pydantic-settings' json.loads would recurse
                raise SettingsError(f"environment: {key}: {exc}") from None
            except ValueError:
                pass  # not JSON: pydantic-settings says so, naming the setting
    source = EnvSettingsSource(Settings, case_sensitive=False)
    source.env_vars = {k.lower(): v for k, v in ours.items()}
    try:
        values = source()
    except SourceError as exc:
        raise SettingsError(f"environment: {exc}") from None
    return {k: v for k, v in values.items() if k in Settings.model_fields}


def env_name(name: str) -> str:
    """The environment variable of a setting."""
    return ENV_PREFIX + name.upper()


def resolve_settings(flags: Mapping[str, Any] | None = None, *, targets: Sequence[str] = (),
                     cwd: Path | None = None, environ: Mapping[str, str] | None = None,
                     export_dotenv: bool = True) -> Resolved:
    """The effective settings: defaults < config file < .env < AUDITOR_* < flags.

    `flags` holds only the flags given (name → value). `targets` are the audit's targets: no
    config or `.env` is read from inside a local one. With `export_dotenv`, the provider
    variables of the `.env` (API keys, base URLs, tracing) are exported to the process
    environment, never overriding it. Raises `SettingsError` (one line) on a bad value."""
    env = dict(os.environ if environ is None else environ)
    here = cwd or Path.cwd()
    roots = _local_roots(targets, here)
    config, dotenv = find_project(here, roots)
    origins: dict[str, Origin] = {}
    values: dict[str, Any] = {}
    hosts: list[str] = list(default("allowed_hosts"))
    host_origins: list[str] = []

    def apply(layer: dict[str, Any], origin: Origin) -> None:
        for key, value in layer.items():
            if key == "allowed_hosts":  # every layer adds hosts
                extra = [h for h in split_hosts(value) or () if h not in hosts]
                hosts.extend(extra)
                host_origins.append(str(origin))
                continue
            values[key] = value
            origins[key] = origin

    if config is not None:
        label = f"{config} [tool.{PYPROJECT_TABLE}]" if config.name == "pyproject.toml" \
            else str(config)
        apply(read_config_file(config), Origin("file", label))
    if dotenv is not None:
        dotenv_vars = _dotenv_values(dotenv)
        for key, value in _env_layer(dotenv_vars).items():
            apply({key: value}, Origin("dotenv", f"{dotenv} ({env_name(key)})"))
        if export_dotenv:
            for key, value in dotenv_vars.items():
                if not key.upper().startswith(ENV_PREFIX):
                    os.environ.setdefault(key, value)
    for key, value in _env_layer(env).items():
        apply({key: value}, Origin("env", env_name(key)))
    for key, value in (flags or {}).items():
        if value is not None:
            apply({key: value}, Origin("flag", "--" + FLAG_NAMES.get(key, key).replace("_", "-")))
    if host_origins:
        values["allowed_hosts"] = tuple(hosts)
        origins["allowed_hosts"] = Origin("default", "+ " + ", ".join(host_origins))
    if not values.get("no_cache") and not values.get("cache_dir"):
        values["cache_dir"] = _platform_cache_dir()
        origins.setdefault("cache_dir", Origin("default", "(platform cache directory)"))
    elif values.get("no_cache"):
        values["cache_dir"] = None
    try:
        settings = Settings.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = str(first["loc"][0]) if first["loc"] else "?"
        where = origins.get(key, Origin("default"))
        raise SettingsError(f"setting {key} ({where}): {first['msg']}") from None
    for name in Settings.model_fields:
        origins.setdefault(name, Origin("default"))
    skipped = tuple(str(t) for t in roots)
    return Resolved(settings, origins, config, dotenv, skipped)


# The flag that sets a field, where it is not the field's own name.
FLAG_NAMES = {"rubric_path": "rubric", "clone_depth": "depth", "call_timeout_s": "call_timeout",
              "allowed_hosts": "allow_host", "persona_models": "persona_model",
              "queue_visibility_timeout_s": "visibility_timeout",
              "queue_timeout_s": "queue_timeout"}


def _platform_cache_dir() -> str:
    from platformdirs import user_cache_dir

    return str(Path(user_cache_dir(APP_NAME)))


def show_settings(resolved: Resolved) -> str:
    """The effective settings, one `name = value  # origin` line each (like
    `ruff --show-settings`), after a header naming the files read."""
    import json

    lines = [f"config file: {resolved.config_file or 'none'}",
             f".env file:   {resolved.dotenv_file or 'none'}"]
    if resolved.skipped:
        lines.append("never read from the audit target: " + ", ".join(resolved.skipped))
    lines.append("")
    data = resolved.settings.model_dump(mode="json")
    for name, info in Settings.model_fields.items():  # machine settings, kept out of dumps
        if info.exclude:
            value = getattr(resolved.settings, name)
            data[name] = redact_url(value) if isinstance(value, str) else value
    width = max(len(k) for k in data)
    for key, value in data.items():
        lines.append(f"{key:<{width}} = {json.dumps(value)}  # {resolved.origins[key]}")
    return "\n".join(lines)
