"""Facts about what the judges do are read from code the graph runs: a retry loop, a schema
binding or a persona prompt in a module nothing wired calls counts for nothing; a callback,
a lambda dispatch table or a tool list still counts; when a node's function cannot be
resolved, every file counts as before."""

from __future__ import annotations

import ast
from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.forensics.code.liveness import name_references
from automaton_auditor.state import Finding

from .test_code_ast_graph import by_facet, write_repo
from .test_code_synthesis import DETECTIVES_ONLY

GRAPH = '''
from langgraph.graph import StateGraph, START, END
from nodes.justice import prosecutor_node, defense_node, tech_lead_node


def build(State):
    g = StateGraph(State)
    g.add_node("prosecutor", {prosecutor})
    g.add_node("defense", defense_node)
    g.add_node("tech_lead", tech_lead_node)
    g.add_edge(START, "prosecutor")
    g.add_edge(START, "defense")
    g.add_edge(START, "tech_lead")
    g.add_edge("prosecutor", END)
    g.add_edge("defense", END)
    g.add_edge("tech_lead", END)
    return g.compile()
'''

# The live judges: one-line prompts, a schema binding, no retry.
LIVE = '''
from langchain_openai import ChatOpenAI
from state import JudicialOpinion


def _opinion(system, user):
    try:
        llm = ChatOpenAI(model="m").with_structured_output(JudicialOpinion)
        return llm.invoke([("system", system), ("human", user)])
    except Exception:
        return None


def make_judge(name):
    return prosecutor_node


def prosecutor_node(state):
    return {"opinions": [_opinion("Strict Prosecutor. Find flaws.", "Audit it")]}


def defense_node(state):
    return {"opinions": [_opinion("Defense Counsel. Highlight strengths.", "Audit it")]}


def tech_lead_node(state):
    return {"opinions": [_opinion("Tech Lead. Neutral arbitrator.", "Audit it")]}
'''

# Richer judges with a retry loop, in a module nothing imports.
PHILOSOPHY = ("weighs every claim against the evidence, reads the code line by line, "
              "checks each rubric dimension in turn, distrusts the report's prose, and "
              "explains each point it takes with the file and line it rests on, in plain "
              "words a developer can act on the next morning without asking again")
DEAD = f'''
from langchain_openai import ChatOpenAI
from state import JudicialOpinion


def _invoke(system, user, max_retries=3):
    model = ChatOpenAI(model="m").with_structured_output(JudicialOpinion)
    for _ in range(max_retries):
        try:
            return model.invoke([("system", system), ("human", user)])
        except Exception:
            continue
    return None


def prosecutor_node(state):
    return _invoke("You are the Prosecutor: a harsh critic hunting security flaws who "
                   "{PHILOSOPHY}.", "Evidence: " + str(state))


def defense_node(state):
    return _invoke("You are the Defense: you reward effort and intent, and you "
                   "{PHILOSOPHY}.", "Evidence: " + str(state))


def tech_lead_node(state):
    return _invoke("You are the Tech Lead: a pragmatic architect weighing maintainability "
                   "who {PHILOSOPHY}.", "Evidence: " + str(state))
'''


def _findings(tmp_path: Path, prosecutor: str = "prosecutor_node",
              extra: dict[str, str] | None = None) -> dict[str, Finding]:
    files = write_repo(tmp_path, {"graph.py": GRAPH.replace("{prosecutor}", prosecutor),
                                  "nodes/justice.py": LIVE, "nodes/rich.py": DEAD,
                                  **(extra or {})})
    findings, _ = code_findings(tmp_path, files)
    return {f.facet: by_facet(findings, f.facet) for f in findings}


def test_a_retry_loop_and_prompts_nothing_wired_calls_count_for_nothing(
        tmp_path: Path) -> None:
    facts = _findings(tmp_path)
    retry = facts["llm.retry"]
    assert not retry.found
    assert "never runs" in retry.rationale and "nodes/rich.py" in retry.rationale
    assert facts["llm.structured_output"].location.startswith("nodes/justice.py:")
    text = facts["judges.persona_text"]
    assert text.location.startswith("nodes/justice.py:")
    assert not text.found  # the live prompts are a few words each


def test_an_unresolved_node_function_keeps_every_file(tmp_path: Path) -> None:
    # ``make_judge("x")`` is built at run time: what the graph runs is not known.
    facts = _findings(tmp_path, prosecutor='make_judge("Prosecutor")')
    assert facts["llm.retry"].found
    assert facts["llm.retry"].location.startswith("nodes/rich.py:")


CALLBACK = '''
from nodes.retrying import with_retries


def prosecutor_node(state):
    handlers = {"judge": lambda s: with_retries(s)}
    return handlers["judge"](state)
'''
RETRYING = '''
from langchain_openai import ChatOpenAI


def with_retries(state, attempts=3):
    for _ in range(attempts):
        try:
            return ChatOpenAI(model="m").invoke(str(state))
        except Exception:
            continue
'''


def test_a_helper_reached_through_a_lambda_dispatch_table_counts(tmp_path: Path) -> None:
    graph = GRAPH.replace("from nodes.justice import prosecutor_node,",
                          "from nodes.callback import prosecutor_node\n"
                          "from nodes.justice import")
    files = write_repo(tmp_path, {"graph.py": graph.replace("{prosecutor}", "prosecutor_node"),
                                  "nodes/justice.py": LIVE, "nodes/callback.py": CALLBACK,
                                  "nodes/retrying.py": RETRYING})
    findings, _ = code_findings(tmp_path, files)
    retry = by_facet(findings, "llm.retry")
    assert retry.found and retry.location.startswith("nodes/retrying.py:")


def test_name_references_are_qualified_like_the_facts() -> None:
    tree = ast.parse("import os\nTOOLS = [scan]\n"
                     "class Judge:\n    mode = pick\n    def run(self):\n"
                     "        def inner():\n            return helper()\n"
                     "        return self.call(inner, os.path.join)\n")
    refs = name_references(tree)
    assert {"scan", "pick"} <= refs[""] and "os" not in refs[""]
    assert {"self.call", "inner", "os.path.join"} <= refs["Judge.run"]
    assert "helper" in refs["Judge.run.inner"]


STUBS = '''
def prosecutor_node(state):
    return {"opinions": []}


def defense_node(state):
    return {"opinions": []}


def tech_lead_node(state):
    return {"opinions": []}
'''


def test_a_graph_that_imports_model_code_but_reaches_none_keeps_every_file(
        tmp_path: Path) -> None:
    # The graph's files import the models' module yet no call reaches it: the call graph
    # may have lost the path (a dynamic dispatch), so every file counts.
    stubs = "from nodes.rich import _invoke  # noqa: F401\n" + STUBS
    files = write_repo(tmp_path, {"graph.py": GRAPH.replace("{prosecutor}", "prosecutor_node"),
                                  "nodes/justice.py": stubs, "nodes/rich.py": DEAD})
    findings, _ = code_findings(tmp_path, files)
    assert by_facet(findings, "llm.retry").found


def test_model_code_nothing_the_graph_imports_cannot_run(tmp_path: Path) -> None:
    # Stub nodes, and the judges in a module that neither the graph nor anything it
    # imports (package __init__ files included) ever imports: that code cannot run.
    files = write_repo(tmp_path, {"graph.py": GRAPH.replace("{prosecutor}", "prosecutor_node"),
                                  "nodes/__init__.py": "", "nodes/justice.py": STUBS,
                                  "nodes/rich.py": DEAD})
    findings, _ = code_findings(tmp_path, files)
    retry = by_facet(findings, "llm.retry")
    assert not retry.found and "nodes/rich.py" in retry.rationale
    assert not by_facet(findings, "judges.personas").found
    # ... but a package __init__ that imports the judges runs them on import.
    files = write_repo(tmp_path, {"nodes/__init__.py": "from nodes import rich  # noqa\n"})
    findings, _ = code_findings(tmp_path, sorted({*files, "graph.py", "nodes/justice.py",
                                                  "nodes/rich.py"}))
    assert by_facet(findings, "llm.retry").found


BUILDER_CLASS = '''
from langgraph.graph import StateGraph, START, END
from nodes.plain import repo_detective


class Auditor:
    def build(self, State):
        g = StateGraph(State)
        g.add_node("repo", self.repo_wrapper)
        g.add_edge(START, "repo")
        g.add_edge("repo", END)
        return g.compile()

    def repo_wrapper(self, state):
        return repo_detective(state)
'''
PLAIN = '''
def repo_detective(state):
    return {}
'''


def test_a_method_node_and_a_keyword_free_module_the_graph_imports_are_followed(
        tmp_path: Path) -> None:
    # ``self.repo_wrapper`` is the builder class's method; nodes/plain.py has no keyword
    # the prefilter looks for, but the graph imports it, so it is read and the judges'
    # module (imported by nothing) cannot run.
    files = write_repo(tmp_path, {"graph.py": BUILDER_CLASS, "nodes/plain.py": PLAIN,
                                  "nodes/rich.py": DEAD})
    findings, _ = code_findings(tmp_path, files)
    retry = by_facet(findings, "llm.retry")
    assert not retry.found and "nodes/rich.py" in retry.rationale


def test_a_chain_of_keyword_free_imports_is_followed_a_bounded_number_of_levels(
        tmp_path: Path) -> None:
    from automaton_auditor.forensics.code.analyze import IMPORT_ROUNDS, collect_facts

    depth = IMPORT_ROUNDS + 5
    chain = {f"m{i}.py": f"import m{i + 1}\n" for i in range(depth)}
    graph = GRAPH.replace("{prosecutor}", "prosecutor_node").replace(
        "from langgraph.graph", "import m0\nfrom langgraph.graph")
    files = write_repo(tmp_path, {"graph.py": graph, "nodes/justice.py": STUBS, **chain})
    facts, _ = collect_facts(tmp_path, files)
    assert "skipped" not in facts["m0.py"] and "skipped" not in facts[
        f"m{IMPORT_ROUNDS - 1}.py"]
    assert "skipped" in facts[f"m{depth - 1}.py"]


def test_a_keyword_free_module_a_node_imports_is_read_so_unimported_model_code_is_dead(
        tmp_path: Path) -> None:
    # nodes/justice.py imports tools/reader.py, which holds no keyword the prefilter looks
    # for: it is read after all, because a module the graph code imports (directly or through
    # a node module) runs what it calls. It imports nothing, so the model code in
    # nodes/judges_llm.py (its name holds a keyword) or nodes/rich.py (it holds none) cannot
    # run: both are unwired.
    stubs = "from tools.reader import read_pdf  # noqa: F401\n" + STUBS
    reader = "def read_pdf(path):\n    return open(path, 'rb').read()\n"
    graph = GRAPH.replace("{prosecutor}", "prosecutor_node")
    named = write_repo(tmp_path, {"graph.py": graph, "nodes/justice.py": stubs,
                                  "tools/reader.py": reader, "nodes/judges_llm.py": DEAD})
    findings, _ = code_findings(tmp_path, named)
    assert not by_facet(findings, "llm.retry").found
    plain = write_repo(tmp_path / "plain", {"graph.py": graph, "nodes/justice.py": stubs,
                                            "tools/reader.py": reader, "nodes/rich.py": DEAD})
    findings, _ = code_findings(tmp_path / "plain", plain)
    retry = by_facet(findings, "llm.retry")
    assert not retry.found and retry.data["unwired"] == ["nodes/rich.py:7", "nodes/rich.py:10"]


UNWIRED_CHIEF = '''
def chief_justice_node(state):
    scores = [o["score"] for o in state["opinions"]]
    if max(scores) - min(scores) > 2:
        return {"final": min(scores)}
    return {"final": round(sum(scores) / len(scores))}
'''


def test_judges_and_a_chief_justice_nothing_wired_runs_are_named_not_denied(
        tmp_path: Path) -> None:
    # Abedulaziz01: the graph runs the detectives only; the persona prompts and the Chief
    # Justice's rules sit in modules it never calls: "none found" would deny they exist
    files = write_repo(tmp_path, {"graph.py": DETECTIVES_ONLY, "nodes/rich.py": DEAD,
                                  "nodes/detectives.py": "def repo_investigator(state):\n"
                                  "    return {}\n",
                                  "nodes/chief.py": UNWIRED_CHIEF})
    findings, _ = code_findings(tmp_path, files)
    personas = by_facet(findings, "judges.personas")
    assert not personas.found
    assert "In code the graph never runs: Prosecutor (nodes/rich.py:" in personas.rationale
    assert personas.data["idle"].keys() == {"Prosecutor", "Defense", "TechLead"}
    node = by_facet(findings, "justice.node")
    assert not node.found
    assert node.rationale.endswith("code it never runs applies rules to scores: "
                                   "nodes/chief.py.")
