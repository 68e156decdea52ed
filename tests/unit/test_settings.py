"""Settings: one copy of every default, layered defaults < config file < .env < AUDITOR_* <
flags with each value's origin, never read from the audit target, parsed once per run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from automaton_auditor.forensics.git.acquire import GitLimits
from automaton_auditor.forensics.pdf.model import ReportLimits
from automaton_auditor.forensics.vision.candidates import VisionLimits
from automaton_auditor.nodes.limits import git_limits, report_limits, vision_limits
from automaton_auditor.settings import Settings
from automaton_auditor.settings.layers import SettingsError, find_project, resolve_settings


def _project(root: Path, table: str = "", dotenv: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir(exist_ok=True)
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "x"\n\n[tool.automaton-auditor]\n{table}', encoding="utf-8")
    if dotenv:
        (root / ".env").write_text(dotenv, encoding="utf-8")
    return root


@pytest.fixture(autouse=True)
def _no_auditor_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key.startswith("AUDITOR_"):
            monkeypatch.delenv(key)


def test_tool_limits_default_to_the_settings_defaults() -> None:
    defaults = Settings()
    assert GitLimits() == git_limits(defaults)
    assert ReportLimits() == report_limits(defaults)
    assert VisionLimits() == vision_limits(defaults)
    assert GitLimits().timeout_s == defaults.git_timeout_s == 300.0
    assert GitLimits().allowed_hosts == defaults.allowed_hosts


def test_settings_constructor_reads_no_environment(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    monkeypatch.setenv("AUDITOR_MODEL", "openai:from-env")
    (tmp_path / ".env").write_text("AUDITOR_MAX_CONCURRENCY=3\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert Settings().model is None and Settings().offline
    assert Settings().max_concurrency == 8


def test_layers_override_in_order_and_say_where_from(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path / "grader", 'max-concurrency = 3\nmodel = "openai:a"\n'
                    'call_timeout = 50\nallow-host = ["git.example.org"]\n',
                    "AUDITOR_MODEL=openai:b\nAUDITOR_MAX_RETRIES=5\n")
    (root / "sub").mkdir()
    resolved = resolve_settings(cwd=root / "sub", environ={})
    s, origin = resolved.settings, resolved.origins
    assert (s.max_concurrency, s.model, s.call_timeout_s, s.max_retries) == (3, "openai:b", 50, 5)
    assert origin["max_concurrency"].layer == "file"
    assert str(root / "pyproject.toml") in str(origin["max_concurrency"])
    assert origin["model"].layer == "dotenv"
    assert s.allowed_hosts[-1] == "git.example.org" and "github.com" in s.allowed_hosts
    env = {"AUDITOR_MAX_CONCURRENCY": "5", "AUDITOR_ALLOWED_HOSTS": "a.org,B.org"}
    resolved = resolve_settings(cwd=root, environ=env)
    assert resolved.settings.max_concurrency == 5
    assert str(resolved.origins["max_concurrency"]) == "env AUDITOR_MAX_CONCURRENCY"
    assert resolved.settings.allowed_hosts[-2:] == ("a.org", "b.org")
    resolved = resolve_settings({"max_concurrency": 7}, cwd=root, environ=env)
    assert resolved.settings.max_concurrency == 7
    assert str(resolved.origins["max_concurrency"]) == "flag --max-concurrency"
    assert resolved.origins["output_dir"].layer == "default"


def test_auditor_toml_wins_over_pyproject_and_user_dir_is_the_fallback(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path / "p", "max-retries = 4\n")
    (root / "auditor.toml").write_text("max-retries = 6\n", encoding="utf-8")
    assert resolve_settings(cwd=root, environ={}).settings.max_retries == 6
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "automaton-auditor"
    user.mkdir(parents=True)
    (user / "auditor.toml").write_text("max-retries = 7\n", encoding="utf-8")
    lone = tmp_path / "lone"
    (lone / ".git").mkdir(parents=True)
    assert resolve_settings(cwd=lone, environ={}).settings.max_retries == 7


def test_nothing_is_read_from_inside_the_audit_target(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    student = _project(tmp_path / "student", 'model = "openai:student"\n',
                       "AUDITOR_MODEL=openai:evil\nOPENAI_BASE_URL=http://127.0.0.1:9/v1\n")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    resolved = resolve_settings(cwd=student, targets=["."], environ={})
    assert resolved.settings.offline
    assert resolved.config_file is None and resolved.dotenv_file is None
    assert "OPENAI_BASE_URL" not in os.environ
    assert find_project(student / ".", [student.resolve()]) == (None, None)
    # the same folder is fine when it is not the target
    resolved = resolve_settings(cwd=student, targets=["https://github.com/o/r"], environ={})
    assert resolved.settings.model == "openai:evil"
    assert os.environ.pop("OPENAI_BASE_URL") == "http://127.0.0.1:9/v1"


def test_bad_values_are_one_line_errors_naming_their_source(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", "max-concurency = 3\n")
    with pytest.raises(SettingsError, match=r"unknown setting 'max-concurency'"):
        resolve_settings(cwd=root, environ={})
    root = _project(tmp_path / "q", "max-concurrency = 0\n")
    with pytest.raises(SettingsError, match=r"max_concurrency \(file .*pyproject.toml"):
        resolve_settings(cwd=root, environ={})
    with pytest.raises(SettingsError, match="env AUDITOR_MAX_RETRIES"):
        resolve_settings(cwd=tmp_path, environ={"AUDITOR_MAX_RETRIES": "many"})
    fifo_home = tmp_path / "fifo"
    (fifo_home / ".git").mkdir(parents=True)
    os.mkfifo(fifo_home / "auditor.toml")
    with pytest.raises(SettingsError, match="not a regular file"):
        resolve_settings(cwd=fifo_home, environ={})


def _folder(root: Path, name: str, text: str) -> Path:
    root.mkdir(parents=True)
    (root / ".git").mkdir()
    (root / name).write_text(text, encoding="utf-8")
    return root


def test_hostile_config_is_one_line_error(tmp_path: Path) -> None:
    """The invoking project's config is anyone's (a submission unpacked and audited by URL):
    each of these was a traceback (tomllib's or json's RecursionError, `tool = 5`'s
    AttributeError)."""
    deep = "[" * 50_000 + "]" * 50_000
    root = _folder(tmp_path / "deep", "auditor.toml", f"x = {deep}\n")
    with pytest.raises(SettingsError, match=r"auditor\.toml: nested deeper than 32 levels"):
        resolve_settings(cwd=root, environ={})
    root = _folder(tmp_path / "deep33", "auditor.toml", "x = " + "[" * 33 + "]" * 33 + "\n")
    with pytest.raises(SettingsError, match=r"auditor.toml: \$: nested deeper than 32"):
        resolve_settings(cwd=root, environ={})
    root = _folder(tmp_path / "tool", "pyproject.toml",
                   'tool = 5\nnote = "[tool.automaton-auditor]"\n')
    with pytest.raises(SettingsError, match=r"pyproject\.toml: tool is not a table"):
        resolve_settings(cwd=root, environ={})
    with pytest.raises(SettingsError, match=r"AUDITOR_PERSONA_MODELS: .*nested deeper than 32"):
        resolve_settings(cwd=tmp_path, environ={"AUDITOR_PERSONA_MODELS": deep[20_000:80_000]})


def test_state_round_trip_validates_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    original = Settings.model_validate.__func__  # type: ignore[attr-defined]

    def counted(cls: type[Settings], *args: object, **kwargs: object) -> Settings:
        calls.append(1)
        return original(cls, *args, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(Settings, "model_validate", classmethod(counted))
    settings = Settings(model="openai:x", max_retries=1)
    state = settings.to_state()
    assert all(Settings.from_state(dict(state)) is settings for _ in range(40))
    assert calls == []
    other = {**state, "max_retries": 2}
    assert Settings.from_state(other).max_retries == 2
    assert Settings.from_state(other).max_retries == 2
    assert len(calls) == 1
    assert Settings.from_state({"unknown": 1, "model": "openai:y"}).model == "openai:y"


def test_audit_config_shows_file_then_env_then_flag(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", "max-concurrency = 3\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUDITOR_")}

    def show(*args: str, **extra: str) -> str:
        proc = subprocess.run([sys.executable, "-m", "automaton_auditor", "config", *args],
                              cwd=root, env={**env, **extra}, capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 0, proc.stderr
        return next(ln for ln in proc.stdout.splitlines() if ln.startswith("max_concurrency"))

    assert "= 3" in show() and "pyproject.toml [tool.automaton-auditor]" in show()
    assert show(AUDITOR_MAX_CONCURRENCY="5").endswith("= 5  # env AUDITOR_MAX_CONCURRENCY")
    assert show("--max-concurrency", "7", AUDITOR_MAX_CONCURRENCY="5").endswith(
        "= 7  # flag --max-concurrency")


def test_help_imports_no_pydantic() -> None:
    code = ("import sys; sys.argv=['audit', '--help']\nimport automaton_auditor.cli.app\n"
            "print(sorted(m for m in sys.modules if m.startswith('pydantic'))[:1])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert out.strip() == "[]"


def test_ocr_reaches_the_report_reader_with_room_for_its_engine(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from automaton_auditor.cli.flags import resolve_from_flags
    from automaton_auditor.nodes.limits import reader_bounds

    plain = Settings()
    assert not report_limits(plain).ocr
    assert reader_bounds(plain).memory_mb == plain.reader_memory_mb
    # `--ocr` (or AUDITOR_OCR=1) goes to the reader in its limits (also the doc facts' cache
    # key), and the reader's address-space ceiling leaves room for onnxruntime: under the
    # text reader's 640 MB the engine fails to load and a scan stays unread.
    flagged = resolve_from_flags({"ocr": True}).settings
    monkeypatch.setenv("AUDITOR_OCR", "1")
    from_env = resolve_settings({}).settings
    for settings in (flagged, from_env):
        assert report_limits(settings).ocr
        assert reader_bounds(settings).memory_mb == settings.reader_ocr_memory_mb >= 2048
