"""Safety, state, structured output, personas, justice, unreadable files and the cache."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from automaton_auditor.forensics.code import analyze as code_ast
from automaton_auditor.forensics.code.analyze import code_findings, collect_facts
from automaton_auditor.forensics.code.personas import overlap

from .test_code_ast_graph import by_facet, write_repo

TOOLS = '''
import os
import subprocess
import tempfile


def clone(url: str) -> str:
    """Never uses os.system; see docs."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = ["git", "clone", "--", url, tmp]
        try:
            subprocess.run(cmd, check=True, capture_output=True, timeout=60)
        except subprocess.CalledProcessError as exc:
            raise RuntimeError(exc.stderr) from exc
        return tmp


def bad(url):
    os.system("git clone " + url)
    os.system("ls")
    subprocess.run(f"git log {url}", shell=True)
    return eval(url)
'''


def test_safety_facts_confirmed_by_code(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"src/tools/git_tools.py": TOOLS})
    findings, _ = code_findings(tmp_path, files)
    os_system = by_facet(findings, "safety.os_system")
    assert os_system.found and os_system.security
    assert os_system.location == "src/tools/git_tools.py:19"
    assert os_system.data["tainted"] == 1 and os_system.data["total"] == 2
    shell = by_facet(findings, "safety.shell_true")
    assert shell.found and shell.security and shell.location == "src/tools/git_tools.py:21"
    assert by_facet(findings, "safety.eval_exec").security
    sandbox = by_facet(findings, "safety.clone_sandbox")
    assert sandbox.found is False  # one of the two clones (os.system) is outside a tempdir
    assert sandbox.data["locations"] == ["src/tools/git_tools.py:12"]
    clone = by_facet(findings, "safety.clone")
    assert clone.data["functions"] == ["src/tools/git_tools.py:bad",
                                       "src/tools/git_tools.py:clone"]
    timeouts = by_facet(findings, "safety.timeouts")  # os.system's clone has no timeout
    assert not timeouts.found and (timeouts.data["timed"], timeouts.data["total"]) == (1, 2)


GITPYTHON = '''
import tempfile

from git import GitCommandError, Repo


def clone(url: str) -> str:
    tmp = tempfile.mkdtemp()
    {body}
    return tmp
'''


def test_a_git_library_clone_in_a_try_block_handles_its_errors(tmp_path: Path) -> None:
    """GitPython's Repo.clone_from runs git without a subprocess call of the repository's
    own: in a try block, its errors are handled; bare, they are not."""
    guarded = GITPYTHON.format(body="try:\n        Repo.clone_from(url, tmp)\n"
                                    "    except GitCommandError as exc:\n"
                                    "        raise RuntimeError(str(exc)) from exc")
    files = write_repo(tmp_path, {"tools.py": guarded})
    errors = by_facet(code_findings(tmp_path, files)[0], "safety.subprocess_errors")
    assert errors.found and errors.data["handled"] == 1 and errors.data["total"] == 1
    bare = GITPYTHON.format(body="Repo.clone_from(url, tmp)")
    files = write_repo(tmp_path / "bare", {"tools.py": bare})
    errors = by_facet(code_findings(tmp_path / "bare", files)[0], "safety.subprocess_errors")
    assert not errors.found and errors.data["total"] == 1


def test_literal_os_system_is_not_a_security_flaw(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"x.py": "import os\n\ndef f():\n    os.system('ls')\n"})
    finding = by_facet(code_findings(tmp_path, files)[0], "safety.os_system")
    assert finding.found and not finding.security


STATE = '''
import operator
from typing import Annotated
from pydantic import BaseModel
from typing_extensions import TypedDict


class Evidence(BaseModel):
    goal: str


class JudicialOpinion(BaseModel):
    score: int


class AgentState(TypedDict):
    evidences: Annotated[dict[str, list[Evidence]], operator.ior]
    opinions: Annotated[list[JudicialOpinion], operator.add]
    note: str
'''


def test_state_reducers_and_models(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"core/state.py": STATE})
    findings, _ = code_findings(tmp_path, files)
    reducers = by_facet(findings, "state.reducers")
    assert reducers.found
    assert reducers.data["reducers"] == {"evidences": "operator.ior", "opinions": "operator.add"}
    state = by_facet(findings, "state.agent_state")
    assert state.location == "core/state.py:16"
    assert state.content is not None and state.content.startswith("class AgentState")
    assert by_facet(findings, "state.collections").found
    assert by_facet(findings, "state.models").found


def test_state_fields_declared_on_its_base_classes_count(tmp_path: Path) -> None:
    # AgentState(_Required, _Optional): the reducers sit on a base TypedDict.
    split = STATE.replace("class AgentState(TypedDict):",
                          "class _Optional(TypedDict, total=False):")
    split += "\n\nclass _Required(TypedDict):\n    repo_url: str\n"
    split += "\n\nclass AgentState(_Required, _Optional):\n    \"\"\"The graph state.\"\"\"\n"
    files = write_repo(tmp_path, {"core/state.py": split})
    findings, _ = code_findings(tmp_path, files)
    reducers = by_facet(findings, "state.reducers")
    assert reducers.found and reducers.location == "core/state.py:26"
    assert reducers.data["reducers"] == {"evidences": "operator.ior", "opinions": "operator.add"}
    assert "core/state.py:17: evidences" in (reducers.content or "")
    assert by_facet(findings, "state.collections").found
    assert set(by_facet(findings, "state.agent_state").data["fields"]) == {
        "repo_url", "evidences", "opinions", "note"}


def test_state_without_reducers(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"s.py": "from typing import TypedDict\n\n"
                                          "class GraphState(TypedDict):\n    items: list\n"})
    findings, _ = code_findings(tmp_path, files)
    assert by_facet(findings, "state.agent_state").found
    assert by_facet(findings, "state.reducers").found is False


JUDGES = '''
from langchain_openai import ChatOpenAI
from state import JudicialOpinion

SHARED = "Score the evidence from one to five and cite the evidence ids you rely on. " * 3
PROSECUTOR_PROMPT = "You are the Prosecutor. Hunt for gaps, security flaws and laziness. " + SHARED
DEFENSE_PROMPT = "You are the Defense attorney. Reward effort, intent and creative workarounds."
TECH_LEAD_PROMPT = "You are the Tech Lead. Weigh architecture, maintainability, viability."


def judge(prompt, retries=3):
    llm = ChatOpenAI(model="x").with_structured_output(JudicialOpinion)
    for attempt in range(retries):
        try:
            return llm.invoke(prompt)
        except ValueError:
            continue
'''


def test_structured_output_retry_and_personas(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"nodes/judges.py": JUDGES})
    findings, _ = code_findings(tmp_path, files)
    structured = by_facet(findings, "llm.structured_output")
    assert structured.found and structured.data["schemas"] == ["state.JudicialOpinion"]
    assert by_facet(findings, "llm.opinion_schema").found
    assert by_facet(findings, "llm.retry").found
    personas = by_facet(findings, "judges.personas")
    assert personas.found
    assert personas.data["locations"]["Defense"] == "nodes/judges.py:7"
    assert by_facet(findings, "judges.collusion").found is False


def test_persona_prompts_of_a_sentence_or_two_are_thin_when_calls_are_not_followed(
        tmp_path: Path) -> None:
    """The judges' model calls cannot be followed (the prompt is a parameter), so the texts
    named for a persona are all it can have of its own: each is one sentence (SHARED is
    no persona's). With every persona given more than 40 words of its own, no such fact."""
    findings, _ = code_findings(tmp_path, write_repo(tmp_path, {"nodes/judges.py": JUDGES}))
    thin = by_facet(findings, "judges.persona_text")
    assert thin.found is False and thin.data["thin"] == ["Defense", "Prosecutor", "TechLead"]
    assert thin.data["followed"] is False and thin.confidence < 0.75
    own = " Read each piece of evidence against the criterion before you score it" * 5
    long = JUDGES.replace('and laziness. "', f'and laziness.{own} "').replace(
        'creative workarounds."', f'creative workarounds.{own}"').replace(
        'maintainability, viability."', f'maintainability, viability.{own}"')
    findings, _ = code_findings(tmp_path / "long",
                                write_repo(tmp_path / "long", {"nodes/judges.py": long}))
    assert [f for f in findings if f.facet == "judges.persona_text"] == []


def test_persona_prompts_no_model_receives(tmp_path: Path) -> None:
    """Distinct persona prompts, but no file imports a library a model call could go
    through: the judges' scores are fixed in code (judges.no_model); with a chat model
    imported, no such fact."""
    mock = JUDGES.replace("from langchain_openai import ChatOpenAI\n", "").replace(
        '    llm = ChatOpenAI(model="x").with_structured_output(JudicialOpinion)\n', "").replace(
        "            return llm.invoke(prompt)", "            return JudicialOpinion(score=3)")
    findings, _ = code_findings(tmp_path, write_repo(tmp_path, {"nodes/judges.py": mock}))
    assert by_facet(findings, "judges.personas").found
    unsent = by_facet(findings, "judges.no_model")
    assert unsent.found and unsent.pattern == "failure" and unsent.data["model_imports"] == []
    real, _ = code_findings(tmp_path / "real",
                            write_repo(tmp_path / "real", {"nodes/judges.py": JUDGES}))
    assert not by_facet(real, "judges.no_model").found
    # a model client imported in a module the prefilter skips (no keyword in it) still counts
    client = "from openai import OpenAI\n\nclient = OpenAI()\n"
    helper, _ = code_findings(tmp_path / "helper", write_repo(
        tmp_path / "helper", {"nodes/judges.py": mock, "llm_client.py": client}))
    assert not by_facet(helper, "judges.no_model").found


def test_persona_collusion_from_prompt_files(tmp_path: Path) -> None:
    body = ("Read every piece of evidence carefully, weigh the rubric criterion, and return a "
            "score from one to five with a short argument citing the evidence ids. ") * 4
    files = write_repo(tmp_path, {
        "prompts/prosecutor.md": "You are the prosecutor. " + body,
        "prompts/defense.md": "You are the defense. " + body,
        "prompts/tech_lead.md": "You are the tech lead. " + body,
    })
    findings, _ = code_findings(tmp_path, files)
    collusion = by_facet(findings, "judges.collusion")
    assert collusion.found and collusion.pattern == "failure"
    assert min(collusion.data["overlap"].values()) > 0.5
    assert overlap("a b c d", "w x y z") == 0.0


def test_empty_prompt_files_are_no_persona_prompts(tmp_path: Path) -> None:
    """amare1990: three 0-byte ``src/prompts/*.txt`` named for the personas were "distinct
    persona prompts" sharing 0.0 of their (absent) text."""
    files = write_repo(tmp_path, {f"src/prompts/{name}.txt": "" if name != "defense" else "\n"
                                  for name in ("prosecutor", "defense", "techlead")})
    findings, _ = code_findings(tmp_path, files)
    assert not by_facet(findings, "judges.personas").found
    collusion = by_facet(findings, "judges.collusion")
    assert collusion.data["overlap"] == {}, collusion.rationale


def test_justice_rules_come_from_behaviour_not_from_names(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"nodes/justice.py": '''
def chief_justice(state, llm):
    """Mentions an LLM and security_override in prose only."""
    scores = [o.score for o in state["opinions"]]
    variance = max(scores) - min(scores)
    found = [e for e in state["evidences"] if e.found]
    if not found:
        return min(min(scores), 3), "security_override"
    if variance > 2:
        return dissent(scores)
    return round(sum(scores) / len(scores)), "fact_supremacy"
''', "nodes/synthesis_llm.py": '''
def synthesize(state, llm):
    return llm.invoke(str(state))
'''})
    findings, _ = code_findings(tmp_path, files)
    rules = by_facet(findings, "justice.rules")
    assert set(rules.data["rules"]) == {"security_override", "fact_supremacy",
                                        "variance_re_evaluation"}
    assert "nodes/justice.py:7: if not found:" in (rules.content or "")
    # the one cap on the evidence is both rules' only decision: it makes one of them
    assert not rules.found and "(nodes/justice.py:7 is one decision), so it counts once" in \
        rules.rationale
    assert by_facet(findings, "justice.variance").location == "nodes/justice.py:9"
    assert by_facet(findings, "justice.averaging").found is False
    deterministic = by_facet(findings, "justice.deterministic")
    assert deterministic.found is False  # the other synthesis function returns a model answer
    assert deterministic.location == "nodes/synthesis_llm.py:3"
    node = by_facet(findings, "justice.node")
    assert node.location == "nodes/justice.py:2"
    assert node.content is not None and node.content.startswith("def chief_justice(state, llm):")


def test_syntax_error_and_non_utf8_files_are_recorded(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"good.py": "import os\nos.system(input())\n",
                                  "broken.py": "def f(:\n    StateGraph\n"})
    (tmp_path / "latin.py").write_bytes(b"# caf\xe9\nimport os\nos.system(x)\n")
    findings, _ = code_findings(tmp_path, [*files, "latin.py"])
    parse = by_facet(findings, "repo.acquire")
    assert parse.found is False
    assert parse.data["errors"] == {"broken.py": "syntax error line 1: invalid syntax",
                                    "latin.py": "not valid UTF-8"}
    assert by_facet(findings, "safety.os_system").location == "good.py:2"


def test_deep_nesting_does_not_crash(tmp_path: Path) -> None:
    deep = "x = " + "[" * 90 + "]" * 90 + "\nimport subprocess\n"
    files = write_repo(tmp_path, {"deep.py": deep})
    findings, _ = code_findings(tmp_path, files)
    assert by_facet(findings, "repo.acquire").found


def test_cache_skips_parsing_and_survives_corruption(tmp_path: Path, monkeypatch) -> None:
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    files = write_repo(repo, {"core/state.py": STATE, "nodes/judges.py": JUDGES})
    first, stats = collect_facts(repo, files, cache)
    assert stats["parsed"] == 2 and stats["cached"] == 0
    calls: list[str] = []
    original = code_ast.parse_chunk
    monkeypatch.setattr(code_ast, "parse_chunk", lambda r, paths: calls.extend(paths) or
                        original(r, paths))
    second, stats = collect_facts(repo, files, cache)
    assert stats["cached"] == 2 and calls == [] and second == first
    with sqlite3.connect(cache / "ast_facts.sqlite") as conn:
        conn.execute("UPDATE entries SET body = '{not json'")
    third, stats = collect_facts(repo, files, cache)
    assert stats["parsed"] == 2 and third == first
    # the whole database replaced by garbage (its WAL may still hold the header page)
    for sidecar in ("ast_facts.sqlite-wal", "ast_facts.sqlite-shm"):
        (cache / sidecar).unlink(missing_ok=True)
    (cache / "ast_facts.sqlite").write_bytes(b"garbage, not a database" * 10)
    fourth, stats = collect_facts(repo, files, cache)
    assert stats["parsed"] == 2 and fourth == first


def test_clone_auth_and_url_checks_come_from_code(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"tools/clone.py": '''
import subprocess
import tempfile
from urllib.parse import urlparse


def clone(url):
    # authentication is handled upstream (a comment, not code)
    if urlparse(url).scheme != "https":
        raise ValueError(url)
    with tempfile.TemporaryDirectory() as tmp:
        result = subprocess.run(["git", "clone", url, tmp], capture_output=True, timeout=9)
        if result.returncode != 0 and "Authentication failed" in result.stderr:
            raise PermissionError(url)
'''})
    findings, _ = code_findings(tmp_path, files)
    assert by_facet(findings, "safety.auth_errors").found
    assert by_facet(findings, "safety.url_validation").found
    assert by_facet(findings, "safety.subprocess_errors").found  # returncode is checked
    commented = write_repo(tmp_path / "b", {"c.py": '''
import subprocess


def clone(url):
    # Authentication failed? permission? credentials? -- prose only
    subprocess.run(["git", "clone", url, "x"])
'''})
    findings, _ = code_findings(tmp_path / "b", commented)
    assert by_facet(findings, "safety.auth_errors").found is False
    assert by_facet(findings, "safety.url_validation").found is False
    assert by_facet(findings, "safety.subprocess_errors").found is False


def test_a_non_empty_test_and_a_docstring_are_no_url_validation(tmp_path: Path) -> None:
    """gemechisworku: "Valid GitHub clone URL" in the docstring and ``if not url`` were
    credited as URL validation; the fact now says the code only tests the URL is given."""
    files = write_repo(tmp_path, {"clone.py": '''
import subprocess
import tempfile


def clone(repo_url):
    """Clone a valid GitHub URL; raises on an invalid URL."""
    if not repo_url or not isinstance(repo_url, str):
        raise ValueError("repo_url must be a non-empty string")
    tmp = tempfile.mkdtemp()
    subprocess.run(["git", "clone", repo_url, tmp], check=True, timeout=9)
    return tmp
'''})
    url = by_facet(code_findings(tmp_path, files)[0], "safety.url_validation")
    assert url.found is False and url.location == "clone.py:8"
    assert "only tests that the URL is given" in url.rationale


def test_a_validator_is_credited_for_its_test_not_its_name(tmp_path: Path) -> None:
    """Melaku-GA: a log callback's ``_sanitize_inputs`` (it truncates values) was listed as
    a URL validator function; tedoaba's ``sanitize_repo_url`` only strips characters."""
    clone = '''
import subprocess


def clone(url):
    subprocess.run(["git", "clone", url, "x"], check=True, timeout=9)
'''
    named = write_repo(tmp_path / "a", {"clone.py": clone, "graph.py": '''
from langgraph.graph import StateGraph


class Tracer:
    def _sanitize_inputs(self, inputs):
        if isinstance(inputs, str) and len(inputs) > 1000:
            return inputs[:1000]
        return str(inputs)


def sanitize_repo_url(url):
    return url.replace(";", "").strip()
'''})
    url = by_facet(code_findings(tmp_path / "a", named)[0], "safety.url_validation")
    assert url.found is False and "validator functions: none" in url.rationale
    testing = write_repo(tmp_path / "b", {"clone.py": clone, "checks.py": '''
"""Checks made before a clone."""
import re


def validate_repo_url(url):
    if not re.match(r"^https://github\\.com/[\\w.-]+/[\\w.-]+$", url):
        raise ValueError(url)
'''})
    url = by_facet(code_findings(tmp_path / "b", testing)[0], "safety.url_validation")
    assert url.found and "validator functions: checks.py:6" in url.rationale


def test_clone_in_a_class_that_owns_the_temporary_directory(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"repo_manager.py": '''
import subprocess
import tempfile


class RepoManager:
    def __enter__(self):
        self._tmp = tempfile.TemporaryDirectory()
        return self

    def clone(self, url):
        subprocess.run(["git", "clone", url, self._tmp.name], check=True, timeout=60)
'''})
    findings, _ = code_findings(tmp_path, files)
    sandbox = by_facet(findings, "safety.clone_sandbox")
    assert sandbox.found and sandbox.location == "repo_manager.py:12"


def test_two_workers_give_the_same_facts(tmp_path: Path, monkeypatch) -> None:
    files = write_repo(tmp_path, {f"m{i}.py": STATE for i in range(4)} | {
        "nodes/judges.py": JUDGES, "tools.py": TOOLS})
    monkeypatch.setattr(code_ast, "PARALLEL_MIN_FILES", 2)
    single, _ = collect_facts(tmp_path, files, None, workers=1)
    double, _ = collect_facts(tmp_path, files, None, workers=2)
    assert double == single and len(double) == 6


def test_second_audit_of_a_commit_parses_nothing(tmp_path: Path, monkeypatch) -> None:
    from automaton_auditor.forensics.git.acquire import GitLimits, acquire, parse_target

    from .test_git_narrative import make_repo

    repo = make_repo(tmp_path / "t", [("state", {"core/state.py": STATE}),
                                      ("judges", {"nodes/judges.py": JUDGES})])
    limits = GitLimits()
    first = acquire(parse_target(str(repo), limits), tmp_path / "w1", limits)
    findings, graph = code_findings(first.path, first.files, tmp_path / "cache")
    second = acquire(parse_target(str(repo), limits), tmp_path / "w2", limits)
    monkeypatch.setattr(code_ast, "parse_chunk", lambda *_a: (_ for _ in ()).throw(
        AssertionError("parsed again")))
    again, graph_again = code_findings(second.path, second.files, tmp_path / "cache")
    assert again == findings and graph_again == graph


def test_collusion_through_a_shared_base_prompt(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"judges.py": '''
BASE = """You are a judge in a digital courtroom. Read the evidence for the criterion, weigh
each fact against the rubric, cite evidence ids for every claim, return a score from one to
five with an argument, and never invent evidence that the detectives did not collect."""

PROSECUTOR_PROMPT = BASE + "\\nAs the prosecutor, be strict."
DEFENSE_PROMPT = f"{BASE}\\nAs the defense, be kind."


def tech_lead():
    prompt = BASE + " As the tech lead, be practical."
    return prompt
'''})
    findings, _ = code_findings(tmp_path, files)
    personas = by_facet(findings, "judges.personas")
    assert personas.found, personas.rationale
    collusion = by_facet(findings, "judges.collusion")
    assert collusion.found and min(collusion.data["overlap"].values()) > 0.8


def test_generic_retry_helper_counts_and_plain_loops_do_not(tmp_path: Path) -> None:
    helper = write_repo(tmp_path / "a", {"judge_retry.py": '''
import time


def with_backoff(fn, max_attempts=3):
    for attempt in range(max_attempts):
        try:
            return fn()
        except TimeoutError:
            time.sleep(2 ** attempt)
'''})
    retry = by_facet(code_findings(tmp_path / "a", helper)[0], "llm.retry")
    assert retry.found and retry.location == "judge_retry.py:7"
    plain = write_repo(tmp_path / "b", {"judge_loop.py": '''
def read_all(paths):
    for path in paths:
        try:
            yield open(path).read()
        except OSError:
            continue
'''})
    assert by_facet(code_findings(tmp_path / "b", plain)[0], "llm.retry").found is False


def test_a_model_call_in_a_try_per_criterion_is_no_retry(tmp_path: Path) -> None:
    """A failure in a loop over criteria moves on to the next criterion: nothing is called
    again. The same call in a ``while`` or ``range`` loop of attempts is a retry."""
    per_item = write_repo(tmp_path / "a", {"judges.py": '''
def judge(chain, dimensions):
    opinions = []
    for dimension in dimensions:
        try:
            opinions.append(chain.invoke({"criterion": dimension}))
        except Exception as exc:
            opinions.append({"score": 2, "argument": str(exc)})
    return opinions
'''})
    retry = by_facet(code_findings(tmp_path / "a", per_item)[0], "llm.retry")
    assert retry.found is False, retry.rationale
    attempts = write_repo(tmp_path / "b", {"judges.py": '''
def judge(chain, dimension):
    tries = 0
    while True:
        try:
            return chain.invoke({"criterion": dimension})
        except ValueError:
            tries += 1
            if tries > 2:
                raise
'''})
    retry = by_facet(code_findings(tmp_path / "b", attempts)[0], "llm.retry")
    assert retry.found and retry.location == "judges.py:6", retry.rationale


def test_commands_built_only_from_constants_are_not_injections(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"ops.py": '''
import os
import subprocess

BASE = "git --version"


def check():
    cmd = BASE + " && echo ok"
    os.system(cmd)
    subprocess.run(f"{BASE} | head", shell=True)


def run(user_input):
    os.system(f"echo {user_input}")


def shadow(BASE):
    os.system(BASE)
'''})
    findings, _ = code_findings(tmp_path, files)
    os_system = by_facet(findings, "safety.os_system")
    assert os_system.data["tainted"] == 2 and os_system.location == "ops.py:15"
    shell = by_facet(findings, "safety.shell_true")
    assert shell.found and not shell.security


def test_clone_function_is_quoted_whole(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"src/tools/git_tools.py": TOOLS})
    clone = by_facet(code_findings(tmp_path, files)[0], "safety.clone")
    assert clone.location == "src/tools/git_tools.py:7"
    assert clone.content is not None
    assert clone.content.startswith("def clone(url: str) -> str:")
    assert "raise RuntimeError(exc.stderr) from exc" in clone.content


def test_result_cache_follows_non_python_files(tmp_path: Path) -> None:
    from automaton_auditor.forensics.git.acquire import GitLimits, acquire, parse_target

    from .test_git_narrative import git, make_repo

    body = ("Read every piece of evidence, weigh the criterion and return a score from one "
            "to five with a short argument citing the evidence ids. ") * 4
    prompts = {f"prompts/{name}.md": f"You are the {name}. " + body
               for name in ("prosecutor", "defense", "tech_lead")}
    repo = make_repo(tmp_path / "t", [("prompts", prompts)])
    limits, cache = GitLimits(), tmp_path / "cache"
    first = acquire(parse_target(str(repo), limits), tmp_path / "w1", limits)
    before, _ = code_findings(first.path, first.files, cache)
    assert by_facet(before, "judges.collusion").found
    (repo / "prompts" / "defense.md").write_text("You are the defense. Reward effort, intent "
                                                 "and creative workarounds generously.")
    git(repo, "commit", "-q", "-am", "distinct defense")
    second = acquire(parse_target(str(repo), limits), tmp_path / "w2", limits)
    after, _ = code_findings(second.path, second.files, cache)
    assert set(by_facet(after, "judges.collusion").data["overlap"]) == {
        "Prosecutor/Defense", "Prosecutor/TechLead", "Defense/TechLead"}
    assert by_facet(after, "judges.collusion").data["overlap"]["Prosecutor/Defense"] < 0.5


RETRY_LOOP = '''
import time
from state import JudgeOpinionsBatch


def run_judge(llm, prompt, dimensions):
    last_err = None
    for attempt in range(3):
        try:
            if attempt > 0:
                time.sleep(2 ** attempt)
            return llm.with_structured_output(JudgeOpinionsBatch).invoke(prompt).opinions
        except Exception as e:
            last_err = e
            err_str = str(e).lower()
HANDLER
    return [{"criterion_id": d, "score": 3, "argument": str(last_err)} for d in dimensions]
'''


def test_a_loop_that_retries_only_rate_limits_does_not_retry_malformed_output(
        tmp_path: Path) -> None:
    """Only a quota error goes round again; a malformed reply breaks out of the loop, whether
    the model is called in the loop or in a helper the loop calls."""
    code = RETRY_LOOP.replace("HANDLER", '''\
            if "429" in err_str or "resource_exhausted" in err_str:
                continue
            break''')
    helper = code.replace("    last_err = None\n", '''\
    def _invoke():
        return llm.with_structured_output(JudgeOpinionsBatch).invoke(prompt).opinions

    last_err = None
''').replace("return llm.with_structured_output(JudgeOpinionsBatch).invoke(prompt).opinions\n"
              "        except", "return _invoke()\n        except")
    assert "return _invoke()" in helper
    for name, source, shift in (("direct", code, 0), ("helper", helper, 3)):
        files = write_repo(tmp_path / name, {"judges.py": source})
        retry = by_facet(code_findings(tmp_path / name, files)[0], "llm.retry")
        assert retry.found is False, (name, retry.rationale)
        assert "'429', 'resource_exhausted'" in retry.rationale
        assert f"leaves the loop at line {18 + shift}" in retry.rationale
        assert f"judges.py:{16 + shift}: if \"429\" in err_str" in (retry.content or "")


def test_a_loop_that_retries_any_failure_or_parse_errors_is_a_retry(tmp_path: Path) -> None:
    """Retrying every failure (raising only on the last attempt), or selecting parse
    errors by their text, retries a malformed reply."""
    for name, handler in {"any": '''\
            if attempt == 2:
                raise''', "parse": '''\
            if "429" in err_str or "validation" in err_str:
                continue
            break''', "helper": '''\
            if not should_retry(e):
                break'''}.items():
        files = write_repo(tmp_path / name, {"judges.py": RETRY_LOOP.replace("HANDLER",
                                                                             handler)})
        retry = by_facet(code_findings(tmp_path / name, files)[0], "llm.retry")
        assert retry.found, (name, retry.rationale)


TOOL_LOOP = '''
from langchain_openai import ChatOpenAI
from state import JudicialOpinion

llm = ChatOpenAI(model="x")


def opinion(prompt):
    chain = llm.bind_tools([JudicialOpinion])
    response = None
    for attempt in range(3):
        try:
            response = chain.invoke(prompt)
            LEAVE
        except Exception as e:
            print(e)
    if response and response.tool_calls:
        return JudicialOpinion(**response.tool_calls[0]["args"])
    return JudicialOpinion(judge="TechLead", score=1, argument="no tool call")
'''


def test_a_loop_leaving_on_any_tool_bound_reply_does_not_retry_malformed_output(
        tmp_path: Path) -> None:
    """A reply from a model bound with bind_tools that makes no tool call raises nothing:
    a loop that leaves on any reply (``if response: break``) retries only failures, and
    the malformed reply ends the loop. Testing the tool call before leaving retries it."""
    for name, leave in (("truthy", "if response:\n                break"),
                        ("always", "break")):
        files = write_repo(tmp_path / name, {"judges.py": TOOL_LOOP.replace("LEAVE", leave)})
        retry = by_facet(code_findings(tmp_path / name, files)[0], "llm.retry")
        assert retry.found is False, (name, retry.rationale)
        assert "no tool call" in retry.rationale and "line 14" in retry.rationale
    files = write_repo(tmp_path / "checked", {"judges.py": TOOL_LOOP.replace(
        "LEAVE", "if response.tool_calls:\n                break")})
    assert by_facet(code_findings(tmp_path / "checked", files)[0], "llm.retry").found


STAND_IN = '''
from state import JudicialOpinion


class JudgeLLMClient:
    """Stub client: no external service."""

    def with_structured_output(self, model):
        return self

    def invoke(self, prompt):
        return JudicialOpinion(judge="TechLead", score=3, argument="stub")


def solicit(prompt):
    return JudgeLLMClient().with_structured_output(JudicialOpinion).invoke(prompt)
'''
WRAPPER = '''
from langchain_openai import ChatOpenAI
from state import JudicialOpinion


class Judge:
    def __init__(self):
        self.llm = ChatOpenAI(model="x")

    def with_structured_output(self, model):
        return self.llm.with_structured_output(model)


def solicit(prompt):
    return Judge().with_structured_output(JudicialOpinion).invoke(prompt)
'''


def test_a_with_structured_output_the_repository_stands_in_for_binds_nothing(
        tmp_path: Path) -> None:
    files = write_repo(tmp_path / "stub", {"nodes/judges.py": STAND_IN})
    findings, _ = code_findings(tmp_path / "stub", files)
    assert not by_facet(findings, "llm.structured_output").found
    assert not by_facet(findings, "llm.opinion_schema").found
    # a method of the repository that binds a real model inside it still binds, and beside
    # a model the repository builds, a stand-in is an offline fallback
    files = write_repo(tmp_path / "wrap", {"nodes/judges.py": WRAPPER})
    findings, _ = code_findings(tmp_path / "wrap", files)
    assert by_facet(findings, "llm.structured_output").found
    fallback = STAND_IN + ("\n\ndef real(prompt):\n    from langchain_openai import ChatOpenAI\n"
                           "    llm = ChatOpenAI(model='x')\n"
                           "    bound = llm.with_structured_output(JudicialOpinion)\n"
                           "    return bound.invoke(prompt)\n")
    files = write_repo(tmp_path / "fallback", {"nodes/judges.py": fallback})
    findings, _ = code_findings(tmp_path / "fallback", files)
    assert len(by_facet(findings, "llm.structured_output").data["locations"]) == 2


FREEFORM_GRAPH = '''
import json
from typing import TypedDict

from langchain_openai import ChatOpenAI
from langgraph.graph import StateGraph, START, END
from state import JudicialOpinion


class State(TypedDict):
    evidences: list
    opinions: list


def doc_analyst(state):
    reply = ChatOpenAI(model="x").invoke("list the concepts as JSON")
    return {"evidences": [json.loads(reply.content)]}


def prosecutor(state):
    llm = ChatOpenAI(model="x").with_structured_output(JudicialOpinion)
    return {"opinions": [llm.invoke("judge")]}


builder = StateGraph(State)
builder.add_node("doc_analyst", doc_analyst)
builder.add_node("prosecutor", prosecutor)
builder.add_edge(START, "doc_analyst")
builder.add_edge("doc_analyst", "prosecutor")
builder.add_edge("prosecutor", END)
graph = builder.compile()
'''


def test_json_loads_outside_the_judges_is_noted_not_charged(tmp_path: Path) -> None:
    """Mistire: a document helper's json.loads on a reply was charged as the judges'
    free-text output though the judges are bound to JudicialOpinion."""
    files = write_repo(tmp_path / "doc", {"graph.py": FREEFORM_GRAPH})
    parse = by_facet(code_findings(tmp_path / "doc", files)[0], "llm.freeform_parse")
    assert parse.found is False and parse.data["outside"] == ["graph.py:17"]
    assert "Not charged" in parse.rationale
    # the same parse in the judge's own code is charged
    judged = FREEFORM_GRAPH.replace('"doc_analyst", doc_analyst', '"doc_analyst", prosecutor')
    judged = judged.replace('"prosecutor", prosecutor', '"prosecutor", doc_analyst')
    files = write_repo(tmp_path / "judge", {"graph.py": judged})
    parse = by_facet(code_findings(tmp_path / "judge", files)[0], "llm.freeform_parse")
    assert parse.found and parse.location == "graph.py:17" and not parse.data["outside"]


FACTORY_JUDGES = '''
import json

from langchain_openai import ChatOpenAI


def make_judge(persona):
    def judge(state):
        reply = ChatOpenAI(model="x").invoke(persona)
        return {"opinions": [json.loads(reply.content)]}
    return judge


prosecutor_node = make_judge("strict")
'''
FACTORY_GRAPH = FREEFORM_GRAPH.replace(
    "from state import JudicialOpinion", "from state import JudicialOpinion\n"
    "from judges import prosecutor_node").replace('"prosecutor", prosecutor)',
                                                  '"prosecutor", prosecutor_node)')


def test_json_loads_in_judges_a_factory_makes_is_charged(tmp_path: Path) -> None:
    """Mistire: judge nodes made by a factory at import do not resolve to a function; the
    module that defines them is the judges' code (a detective's parse elsewhere is not)."""
    files = write_repo(tmp_path, {"graph.py": FACTORY_GRAPH, "judges.py": FACTORY_JUDGES})
    parse = by_facet(code_findings(tmp_path, files)[0], "llm.freeform_parse")
    assert parse.found and parse.location.startswith("judges.py:")
    assert parse.data["outside"] == ["graph.py:18"]


REGEX_JUDGES = FACTORY_JUDGES.replace(
    '''        reply = ChatOpenAI(model="x").invoke(persona)
        return {"opinions": [json.loads(reply.content)]}''',
    '''        reply = ChatOpenAI(model="x").invoke(persona)
        match = re.search(r"[{].*[}]", reply.content, re.DOTALL)
        json_str = match.group(0) if match else "{}"
        data = json.loads(json_str)
        return {"opinions": [data]}''').replace("import json\n", "import json\nimport re\n")


def test_json_loads_on_a_regex_match_of_the_content_is_a_free_text_parse(
        tmp_path: Path) -> None:
    """IbnuEyni: the judge cuts the JSON out of ``response.content`` with a regex and
    parses that: still the model's free text, parsed by hand (it read "no json.loads on
    model message content"). A name that never took the content is no parse of it."""
    files = write_repo(tmp_path / "a", {"graph.py": FACTORY_GRAPH, "judges.py": REGEX_JUDGES})
    parse = by_facet(code_findings(tmp_path / "a", files)[0], "llm.freeform_parse")
    assert parse.found and parse.location.startswith("judges.py:")
    unrelated = REGEX_JUDGES.replace("data = json.loads(json_str)",
                                     'data = json.loads(open("cfg.json").read())')
    files = write_repo(tmp_path / "b", {"graph.py": FACTORY_GRAPH, "judges.py": unrelated})
    parse = by_facet(code_findings(tmp_path / "b", files)[0], "llm.freeform_parse")
    assert not parse.found and "judges.py" not in " ".join(parse.data.get("outside") or [])


def test_json_loads_on_content_read_with_getattr_is_a_free_text_parse(tmp_path: Path) -> None:
    """ermiyas111: ``content = getattr(response, "content", None)`` is the reply's text."""
    judges = REGEX_JUDGES.replace("reply.content, re.DOTALL)",
                                  'getattr(reply, "content", ""), re.DOTALL)')
    files = write_repo(tmp_path, {"graph.py": FACTORY_GRAPH, "judges.py": judges})
    parse = by_facet(code_findings(tmp_path, files)[0], "llm.freeform_parse")
    assert parse.found and parse.location.startswith("judges.py:"), parse.rationale


def test_json_loads_in_the_helper_a_reply_is_handed_to_is_a_free_text_parse(
        tmp_path: Path) -> None:
    """Hiwot-Beyene: ``parsed = _parse_json_fallback(reply.content)`` and, in the helper,
    ``json.loads`` over a slice of its parameter. A helper handed other text parses no
    reply."""
    judges = REGEX_JUDGES.replace(
        '''        match = re.search(r"[{].*[}]", reply.content, re.DOTALL)
        json_str = match.group(0) if match else "{}"
        data = json.loads(json_str)''', '''        data = parse_fallback(reply.content)''') + '''

def parse_fallback(content):
    candidate = content.strip()
    start = candidate.find("{")
    return json.loads(candidate[start:])
'''
    files = write_repo(tmp_path / "a", {"graph.py": FACTORY_GRAPH, "judges.py": judges})
    parse = by_facet(code_findings(tmp_path / "a", files)[0], "llm.freeform_parse")
    assert parse.found and parse.location.startswith("judges.py:"), parse.rationale
    other = judges.replace("data = parse_fallback(reply.content)",
                           'data = parse_fallback(open("cfg.json").read())')
    files = write_repo(tmp_path / "b", {"graph.py": FACTORY_GRAPH, "judges.py": other})
    assert not by_facet(code_findings(tmp_path / "b", files)[0], "llm.freeform_parse").found
    # bethel4: the text taken into a local on one branch (``str(reply)`` on the other)
    branched = judges.replace("        data = parse_fallback(reply.content)",
                              "        if hasattr(reply, 'content'):\n"
                              "            text = reply.content\n"
                              "        else:\n"
                              "            text = str(reply)\n"
                              "        data = parse_fallback(text)")
    assert "text = str(reply)" in branched
    files = write_repo(tmp_path / "c", {"graph.py": FACTORY_GRAPH, "judges.py": branched})
    parse = by_facet(code_findings(tmp_path / "c", files)[0], "llm.freeform_parse")
    assert parse.found, parse.rationale


def test_asyncio_shell_is_a_shell_call(tmp_path: Path) -> None:
    files = write_repo(tmp_path, {"tools.py": '''
import asyncio


async def clone(url):
    proc = await asyncio.create_subprocess_shell(f"git clone {url} /tmp/x")
    await proc.wait()
'''})
    shell = by_facet(code_findings(tmp_path, files)[0], "safety.shell_true")
    assert shell.found and shell.security and shell.location == "tools.py:6"


def test_a_loop_retrying_its_own_cleanup_is_no_model_retry(tmp_path: Path) -> None:
    """Miked1991's shape: a retry loop that only removes a directory again (library calls
    on modules and on an attribute of self) retries no model call."""
    files = write_repo(tmp_path, {"git_tools.py": '''
import os
import shutil
import time


class Forensics:
    def force_cleanup(self):
        retries = 3
        for i in range(retries):
            try:
                os.chmod(self.temp_dir.name, 0o700)
                self.temp_dir.cleanup()
                return
            except Exception:
                time.sleep(1)
        shutil.rmtree(self.temp_dir.name, ignore_errors=True)
'''})
    assert by_facet(code_findings(tmp_path, files)[0], "llm.retry").found is False


PROVIDER_GRAPH = '''
from typing import TypedDict

from langgraph.graph import END, START, StateGraph

from nodes.detectives import doc_analyst


class State(TypedDict):
    evidences: dict


def build():
    g = StateGraph(State)
    g.add_node("doc_analyst", doc_analyst)
    g.add_edge(START, "doc_analyst")
    g.add_edge("doc_analyst", END)
    return g.compile()
'''

DETECTIVE = '''
import json

from utils.provider import Provider


def doc_analyst(state):
    llm = Provider("gemini")
    for attempt in range(3):
        try:
            reply = llm.chat([{"role": "user", "content": "find claims"}])
            return {"evidences": {"doc": json.loads(reply)}}
        except ValueError:
            continue
    return {"evidences": {}}
'''


def test_a_retry_loop_around_a_repo_model_client_counts(tmp_path: Path) -> None:
    """Azazh's shape: the loop calls a method of the repository's own client class, in a
    module with no trigger word (imported by a node module, not by the graph module), whose
    method calls a provider SDK. A client whose method only reads a file retries no model."""
    sdk = '''
from google import genai


class Provider:
    def __init__(self, name):
        self.name = name

    def chat(self, messages):
        client = genai.Client()
        return client.models.generate_content(model=self.name, contents=str(messages)).text
'''
    local = '''
class Provider:
    def __init__(self, name):
        self.name = name

    def chat(self, messages):
        with open(self.name) as handle:
            return handle.read()
'''
    for name, provider, counted in [("sdk", sdk, True), ("local", local, False)]:
        files = write_repo(tmp_path / name, {"graph.py": PROVIDER_GRAPH,
                                             "nodes/detectives.py": DETECTIVE,
                                             "utils/provider.py": provider})
        retry = by_facet(code_findings(tmp_path / name, files)[0], "llm.retry")
        assert retry.found is counted, (name, retry.rationale)
