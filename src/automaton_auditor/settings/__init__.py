"""Run settings: one typed model (pydantic-settings) holding the ONE copy of every default.

Layers, lowest first (`settings.layers.resolve_settings`; `audit config` prints the result
and each value's origin):

1. the defaults below;
2. the invoking project's config file: ``auditor.toml``, else ``[tool.automaton-auditor]`` in
   ``pyproject.toml``, found from the current directory upward (stopping at a VCS root), else
   ``auditor.toml`` in the user config directory;
3. the ``.env`` file beside it (``AUDITOR_*`` values; provider keys such as
   ``OPENAI_API_KEY`` are exported to the environment without overriding it);
4. ``AUDITOR_*`` environment variables;
5. command-line flags.

Nothing is ever read from the audited repository: a project directory inside a local target
is skipped (``cd student && audit . report.pdf`` does not read the student's ``.env``).

`Settings(...)` itself reads no environment and no file: only `layers.resolve_settings` does.
Settings travel through the graph state as a plain dict (checkpoints stay serialisable);
`to_state` remembers the object it dumped and `from_state` answers an equal dict from that
memory, so a run validates its settings once, not once per node.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

OFFLINE_BENCH = "offline bench (rule-based judges)"
ENV_PREFIX = "AUDITOR_"
StructuredMethod = Literal["json_schema", "function_calling", "json_mode"]


def split_hosts(value: Any) -> Any:
    """Hosts from a comma list or a list, lower-cased (anything else is left to validation)."""
    if isinstance(value, str):
        return tuple(h.strip().lower() for h in value.split(",") if h.strip())
    if isinstance(value, list | tuple):
        return tuple(str(h).strip().lower() for h in value if str(h).strip())
    return value


class Settings(BaseSettings):
    """Everything a run needs besides its inputs. Every default lives here, and the tools'
    limit dataclasses take theirs from these fields (`default`)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, frozen=True, extra="ignore",
                                      validate_default=False)

    # Where reports go, and the rubric (None: the embedded default).
    output_dir: str = "audit"
    rubric_path: str | None = None
    # Judges. No model means the deterministic offline bench; an API key alone never starts
    # calls.
    model: str | None = None
    persona_models: dict[str, str] = Field(default_factory=dict)
    vision_model: str | None = None
    structured_output_method: StructuredMethod | None = None
    max_concurrency: int = Field(8, ge=1, le=256)
    call_timeout_s: float = Field(120.0, gt=0)
    max_retries: int = Field(2, ge=0, le=10)
    # First backoff between retries (doubled each time; a 429's Retry-After wins).
    retry_backoff_s: float = Field(1.0, ge=0)
    # Cap on each judge answer; the structured schema bounds every string as well.
    max_output_tokens: int = Field(1024, ge=16)
    # Repository acquisition. Hosts given in a config file, AUDITOR_ALLOWED_HOSTS or
    # --allow-host are added to these (`resolve_settings`).
    allowed_hosts: Annotated[tuple[str, ...], NoDecode] = (
        "github.com", "gitlab.com", "bitbucket.org")
    clone_depth: int | None = Field(None, ge=1)
    git_timeout_s: float = Field(300.0, gt=0)
    max_repo_mb: int = Field(500, ge=1)
    max_files: int = Field(50_000, ge=1)
    # Blobs larger than this are left out of remote clones and never written to disk.
    max_blob_bytes: int = Field(1_048_576, ge=1)
    # Report ingestion
    max_report_mb: int = Field(50, ge=1)
    max_report_pages: int = Field(300, ge=1)
    # docling's own per-document timeout; a partial result is kept with a warning.
    report_timeout_s: float = Field(120.0, gt=0)
    # Opt-in OCR of scanned reports (`--ocr`, the `ocr` extra): at most this many pages,
    # within this many seconds.
    ocr: bool = False
    max_ocr_pages: int = Field(40, ge=0)
    ocr_budget_s: float = Field(300.0, gt=0)
    # Diagrams read per report.
    max_diagrams: int = Field(40, ge=0)
    # The child process that reads the report (docling, pypdfium2, OCR): its address-space
    # ceiling (a 44-page report peaks near 220 MB, a 300-page one near 520 MB), CPU-time
    # ceiling (docling's timeout plus the OCR budget) and wall-clock deadline. Past one, the
    # report is unreadable with that reason (`forensics.sandbox`).
    reader_memory_mb: int = Field(640, ge=256)
    # The same ceiling when OCR is on: onnxruntime's models and page renders alone peak near
    # 0.9 GB resident, 1.7 GB of address space, on a 22-page scan.
    reader_ocr_memory_mb: int = Field(2048, ge=256)
    reader_cpu_s: int = Field(480, ge=10)
    reader_timeout_s: float = Field(600.0, gt=0)
    # Caches: the directory in use (None: no cache). `resolve_settings` fills it with the
    # platform cache directory unless `no_cache`; opinions are reused only on request.
    cache_dir: str | None = None
    no_cache: bool = False
    reuse_opinions: bool = False
    # Past one machine (the scale extra): runs in a shared PostgreSQL database instead of
    # runs.sqlite, and the queue's Redis broker; a queued task whose worker died is delivered
    # again after the visibility timeout (longer than the longest audit). These belong to the
    # machine, not to the audit: excluded from the run state (URLs may hold passwords), so they
    # never reach checkpoints, manifests or result keys.
    database_url: str | None = Field(None, exclude=True)
    queue_url: str | None = Field(None, exclude=True)
    queue_visibility_timeout_s: float = Field(3600.0, gt=0, exclude=True)
    # How long `audit batch --queue` waits for its rows before the rest are failed rows
    # (None: `queue.submit.wait_limit` derives it from the visibility timeout and the rows).
    queue_timeout_s: float | None = Field(None, gt=0, exclude=True)

    # Setting names a config file may also use (the command-line spelling).
    ALIASES: ClassVar[dict[str, str]] = {
        "rubric": "rubric_path", "depth": "clone_depth", "call_timeout": "call_timeout_s",
        "allow_host": "allowed_hosts", "allow_hosts": "allowed_hosts",
        "persona_model": "persona_models", "git_timeout": "git_timeout_s",
    }

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: Any,
                                   env_settings: Any, dotenv_settings: Any,
                                   file_secret_settings: Any) -> tuple[Any, ...]:
        """`Settings(...)` takes only its arguments: layering is `resolve_settings`' job, so
        a test or a graph node never picks up the environment by accident."""
        return (init_settings,)

    @field_validator("allowed_hosts", mode="before")
    @classmethod
    def _hosts(cls, value: Any) -> Any:
        return split_hosts(value)

    @field_validator("model", "vision_model", "rubric_path", "cache_dir", "database_url",
                     "queue_url", mode="before")
    @classmethod
    def _blank_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

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
        """A JSON-serialisable form for the graph state (remembered: see `from_state`)."""
        data = self.model_dump(mode="json")
        _SEEN.remember(data, self)
        return data

    @classmethod
    def from_state(cls, data: Mapping[str, Any] | None) -> Settings:
        """Settings from the graph state (unknown keys ignored). A dict equal to one this
        process dumped or validated is answered without validating it again."""
        if not data:
            return _DEFAULT
        hit = _SEEN.get(data)
        if isinstance(hit, Settings):
            return hit
        settings = cls.model_validate({k: v for k, v in data.items() if k in cls.model_fields})
        _SEEN.remember(dict(data), settings)
        return settings


class ParsedMemo:
    """A few (state dict, parsed object) pairs: LangGraph hands every node the same dict, so
    parsing it once per run is enough. Thread-safe; compares by identity, then equality."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self.items: list[tuple[Any, Any]] = []
        self.lock = threading.Lock()

    def get(self, data: Any) -> Any:
        """The object parsed from a dict equal to `data`, or None."""
        with self.lock:
            for seen, parsed in self.items:
                if seen is data:
                    return parsed
            for seen, parsed in self.items:
                if seen == data:
                    return parsed
        return None

    def remember(self, data: Any, parsed: Any) -> None:
        """Remember that `data` parses to `parsed`."""
        with self.lock:
            self.items = [(data, parsed), *[i for i in self.items if i[0] is not data]]
            del self.items[self.size:]


_SEEN = ParsedMemo()
_DEFAULT = Settings()


def redact_url(url: str) -> str:
    """`url` without its password, for messages and `audit config`."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username or ''}:***@{parts.hostname or ''}"
    return urlunsplit(parts._replace(netloc=netloc + (f":{parts.port}" if parts.port else "")))


def default(name: str) -> Any:
    """The default of one setting: the tools' limit dataclasses take theirs from here."""
    return Settings.model_fields[name].get_default(call_default_factory=True)
