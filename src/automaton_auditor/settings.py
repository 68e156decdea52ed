"""Run settings: one frozen dataclass, built by the CLI from options and the environment.

Settings travel through the graph state as a plain dict (so runs can be checkpointed) and are
rebuilt with `Settings.from_state`.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

DEFAULT_ALLOWED_HOSTS = ("github.com", "gitlab.com", "bitbucket.org")
OFFLINE_BENCH = "offline bench (rule-based judges)"


@dataclass(frozen=True)
class Settings:
    """Everything a run needs besides its inputs."""

    output_dir: str = "audit"
    rubric_path: str | None = None
    # No model means the deterministic offline bench; an API key alone never starts calls.
    model: str | None = None
    persona_models: dict[str, str] = field(default_factory=dict)
    vision_model: str | None = None
    structured_output_method: str | None = None
    max_concurrency: int = 8
    call_timeout_s: float = 120.0
    max_retries: int = 2
    # First backoff between retries (doubled each time; a 429's Retry-After wins).
    retry_backoff_s: float = 1.0
    # Cap on each judge answer; the structured schema bounds every string as well.
    max_output_tokens: int = 1024
    # Repository acquisition
    allowed_hosts: tuple[str, ...] = DEFAULT_ALLOWED_HOSTS
    clone_depth: int | None = None
    git_timeout_s: float = 300.0
    max_repo_mb: int = 500
    max_files: int = 50_000
    # Report ingestion
    max_report_mb: int = 50
    max_report_pages: int = 300
    # Caches (None: no cache); opinions are reused only on request (--reuse-opinions).
    cache_dir: str | None = None
    reuse_opinions: bool = False

    @property
    def bench_label(self) -> str:
        """How the report names the judges."""
        if not self.model and not self.persona_models:
            return OFFLINE_BENCH
        if self.persona_models:
            pairs = ", ".join(f"{k}={v}" for k, v in sorted(self.persona_models.items()))
            # the bench model judges for every persona without a model of its own
            return f"LLM bench ({self.model}; {pairs})" if self.model else f"LLM bench ({pairs})"
        return f"LLM bench ({self.model})"

    @property
    def offline(self) -> bool:
        """True when no model is configured."""
        return not self.model and not self.persona_models

    def to_state(self) -> dict[str, Any]:
        """A JSON-serialisable form for the graph state."""
        data = asdict(self)
        data["allowed_hosts"] = list(self.allowed_hosts)
        return data

    @classmethod
    def from_state(cls, data: dict[str, Any] | None) -> Settings:
        """Rebuild settings from the graph state (unknown keys ignored)."""
        data = dict(data or {})
        known = {f.name for f in fields(cls)}
        clean = {k: v for k, v in data.items() if k in known}
        if "allowed_hosts" in clean:
            clean["allowed_hosts"] = tuple(clean["allowed_hosts"])
        return cls(**clean)


def env_model() -> str | None:
    """The model named by AUDITOR_MODEL, if any (never inferred from API keys)."""
    value = os.environ.get("AUDITOR_MODEL", "").strip()
    return value or None


def extra_allowed_hosts() -> tuple[str, ...]:
    """Hosts added by AUDITOR_ALLOWED_HOSTS (comma-separated)."""
    raw = os.environ.get("AUDITOR_ALLOWED_HOSTS", "")
    return tuple(h.strip().lower() for h in raw.split(",") if h.strip())


def load_dotenv_if_present(start: Path | None = None) -> None:
    """Load `.env` from the working directory without overriding the real environment."""
    from dotenv import load_dotenv

    path = (start or Path.cwd()) / ".env"
    if path.is_file():
        load_dotenv(path, override=False)
