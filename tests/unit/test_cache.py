"""Cache building blocks: keys, the store, opinion reuse, cache commands, and the `audit`
group's default command (HEAD read without git: test_git_head)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from automaton_auditor.cli import app
from automaton_auditor.storage.facts import repo_key, report_key
from automaton_auditor.storage.kv import (
    KNOWN_FILES,
    KeyValueStore,
    cache_files,
    clear_cache,
    default_cache_dir,
    detective_version,
)


def test_keys_change_with_what_shapes_the_facts() -> None:
    commit = "a" * 40
    assert repo_key(commit, None, 10, 5) == repo_key(commit, None, 10, 5)
    assert repo_key(commit, None, 10, 5) != repo_key("b" * 40, None, 10, 5)
    assert repo_key(commit, None, 10, 5) != repo_key(commit, 1, 10, 5)
    assert detective_version() in repo_key(commit, None, 10, 5)
    sha = "c" * 64
    assert report_key(sha, {"concepts": ["A"]}) != report_key(sha, {"concepts": ["B"]})
    assert report_key(sha, {"concepts": ["A"]}) != report_key("d" * 64, {"concepts": ["A"]})


def test_store_survives_a_corrupt_database(tmp_path: Path) -> None:
    store = KeyValueStore(tmp_path)
    store.put("k", "1", "body")
    assert store.get("k", "1") == "body"
    (tmp_path / "facts.sqlite").write_bytes(b"garbage" * 1000)
    assert store.get("k", "1") is None  # unreadable: a miss, and the file is reset
    store.put("k", "1", "again")
    assert store.get("k", "1") == "again"


def test_cache_dir_follows_the_environment(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDITOR_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert default_cache_dir() == tmp_path / "elsewhere"
    monkeypatch.delenv("AUDITOR_CACHE_DIR")
    assert default_cache_dir().name == "automaton-auditor"


def test_clear_removes_only_known_files(tmp_path: Path) -> None:
    KeyValueStore(tmp_path).put("k", "1", "x")
    (tmp_path / "runs.sqlite").write_bytes(b"")
    (tmp_path / "mine.txt").write_text("keep me")
    assert {f.name for f in cache_files(tmp_path)} == {"facts.sqlite", "runs.sqlite"}
    assert clear_cache(tmp_path, ["facts.sqlite"]) == ["facts.sqlite"]
    assert (tmp_path / "runs.sqlite").exists()
    assert clear_cache(tmp_path) == ["runs.sqlite"]
    assert (tmp_path / "mine.txt").read_text() == "keep me"
    with pytest.raises(ValueError, match="unknown cache file"):
        clear_cache(tmp_path, ["../etc"])
    assert set(KNOWN_FILES) >= {"facts.sqlite", "ast_facts.sqlite", "runs.sqlite"}


def test_opinion_cache_round_trip_and_corruption(tmp_path: Path) -> None:
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration

    from automaton_auditor.storage.opinions import OpinionCache

    cache = OpinionCache(tmp_path)
    answer = [ChatGeneration(message=AIMessage(content="", tool_calls=[
        {"name": "Opinion", "args": {"score": 4}, "id": "c1"}]))]
    assert cache.lookup("prompt", "model-a") is None
    cache.update("prompt", "model-a", answer)
    hit = cache.lookup("prompt", "model-a")
    assert hit is not None and hit[0].message.tool_calls[0]["args"] == {"score": 4}
    assert cache.lookup("prompt", "model-b") is None  # another model misses
    assert cache.lookup("other prompt", "model-a") is None  # other evidence misses
    cache.store.put("llm", next(iter(_keys(cache))), "{broken")
    assert cache.lookup("prompt", "model-a") is None


def _keys(cache: object) -> list[str]:
    import sqlite3
    from contextlib import closing

    path = cache.store.path  # type: ignore[attr-defined]
    with closing(sqlite3.connect(path)) as conn:
        return [row[0] for row in conn.execute("SELECT key FROM entries")]


def test_unknown_first_argument_falls_through_to_run(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = tmp_path / "nope"
    default = runner.invoke(app, [str(missing), str(tmp_path / "r.pdf"), "--output-dir",
                                  str(tmp_path / "o"), "--quiet"])
    spelled = runner.invoke(app, ["run", str(missing), str(tmp_path / "r.pdf"),
                                  "--output-dir", str(tmp_path / "o"), "--quiet"])
    assert default.exit_code == spelled.exit_code == 2
    assert "does not exist" in default.output and "does not exist" in spelled.output
    helped = runner.invoke(app, ["--help"])
    assert helped.exit_code == 0
    for command in ("batch", "resume", "replay", "runs", "cache"):
        assert command in helped.output


def test_cache_commands_show_and_clear(tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDITOR_CACHE_DIR", str(tmp_path))
    KeyValueStore(tmp_path).put("repo", "k", "{}")
    runner = CliRunner()
    shown = runner.invoke(app, ["cache", "show"])
    assert shown.exit_code == 0 and "facts.sqlite" in shown.output
    cleared = runner.invoke(app, ["cache", "clear"])
    assert cleared.exit_code == 0
    assert not (tmp_path / "facts.sqlite").exists()


def test_reuse_opinions_answers_a_repeated_prompt_from_disk(tmp_path: Path) -> None:
    from langchain_core.globals import get_llm_cache, set_llm_cache
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from automaton_auditor.storage.opinions import enable

    previous = get_llm_cache()
    try:
        cache = enable(tmp_path)
        model = FakeListChatModel(responses=["first answer", "second answer"])
        assert model.invoke("judge this evidence").content == "first answer"
        # The same prompt to the same model: answered from the cache, not the model.
        assert model.invoke("judge this evidence").content == "first answer"
        assert cache.hits == 1
        assert model.invoke("judge other evidence").content == "second answer"
        # A new process (a fresh cache object on the same folder) reads the same answer.
        # (Uncached, a fresh model would answer its first response.)
        enable(tmp_path)
        fresh = FakeListChatModel(responses=["first answer", "second answer"])
        assert fresh.invoke("judge other evidence").content == "second answer"
    finally:
        set_llm_cache(previous)


def test_a_locked_database_is_a_miss_and_is_kept_for_the_other_audits(tmp_path: Path) -> None:
    """Parallel audits share the cache: one that finds it locked must not delete it."""
    import sqlite3

    store = KeyValueStore(tmp_path)
    store.put("k", "1", "body")
    store.timeout_s = 0.05
    holder = sqlite3.connect(tmp_path / "facts.sqlite", isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")  # another audit writing (WAL: reads go on)
        store.put("k", "2", "lost")  # "database is locked": swallowed
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert store.get("k", "1") == "body"
    assert store.get("k", "2") is None
