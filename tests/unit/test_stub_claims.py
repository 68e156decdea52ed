"""A report that says a graph node does its work, read against the stub the graph runs there
(the code's side: `forensics.code.stubs`, `forensics.code.node_stubs`)."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.forensics.code.stubs import delegated_call, placeholder_lines
from automaton_auditor.forensics.contradictions import contradiction_findings
from automaton_auditor.forensics.pdf.claims import extract_statements
from automaton_auditor.state import FeatureClaim, Finding, RebuiltGraph

from .test_code_ast_graph import write_repo

VISION = '''\
def investigate(self, state):
    """Analyse the diagrams."""
    logger.info("VisionInspector is optional - skipping")
    start = time.time()
    try:
        evidence = [Evidence(found=False,
                             content="Visual inspection not implemented (optional feature)",
                             confidence=0.0)]
        duration = time.time() - start
        return {"evidences": {"VisionInspector": evidence}}
    except Exception as e:
        raise NodeExecutionError("VisionInspector", e)
'''
STUB_LINES = ["app/vision.py:20: def investigate(self, state):",
              'app/vision.py:26: content="Visual inspection not implemented",',
              "app/vision.py:29: return {...}"]
GRAPH = RebuiltGraph(builder="g", location="app/graph.py:40",
                     nodes=["start", "vision_inspector", "repo_investigator", "aggregate"],
                     edges=[("start", "vision_inspector"), ("start", "repo_investigator"),
                            ("vision_inspector", "aggregate"),
                            ("repo_investigator", "aggregate")],
                     stub_nodes={"vision_inspector": STUB_LINES})
JUSTICE = Finding(facet="justice.node", goal="Synthesis node", found=True, pattern="success",
                  location="app/justice.py:5", confidence=0.9, rationale="Synthesis ...")


def _claims(*texts: str, lead: str = "") -> list[FeatureClaim]:
    return extract_statements([(page, text) for page, text in enumerate(texts, start=1)],
                              context=lambda _at: (lead, ""))


def _facts(*texts: str, lead: str = "") -> list[Finding]:
    return contradiction_findings(_claims(*texts, lead=lead), [JUSTICE], GRAPH)


def test_a_function_that_returns_a_fixed_not_implemented_placeholder_is_a_stub() -> None:
    # the def line, the placeholder string, the return: what the node hands the graph
    assert placeholder_lines(VISION) == [1, 7, 10]
    # a function that reads its input, or returns fixed data that says nothing of a stand-in
    assert placeholder_lines(VISION.replace("confidence=0.0", "confidence=state['c']")) == []
    assert placeholder_lines(VISION.replace("not implemented", "done")) == []
    assert placeholder_lines("def f(state):\n    return {'x': run(state)}\n") == []


def test_a_function_that_only_hands_its_work_on_names_the_callee() -> None:
    assert delegated_call("def node(state):\n    inspector = VisionInspector()\n"
                          "    return inspector.investigate(state)\n") == "inspector.investigate"
    assert delegated_call("def node(state):\n    x = prepare(state)\n"
                          "    return run(x)\n") is None


def test_a_report_saying_a_stub_node_works_is_a_contradiction_quoting_its_lines() -> None:
    found = _facts('Vision Integration: The VisionInspector is currently in a "simulation" '
                   "phase; it classifies diagrams but does not yet map SVG elements back to "
                   "code files.", lead="Gap Analysis and Forward Plan \u2022 Current Gaps:")
    assert [(f.facet, f.data["kind"], f.data["said"]) for f in found] == [
        ("claims.contradictions", "stub_node", ["VisionInspector classifies diagrams"])]
    assert "its vision_inspector node does nothing" in found[0].rationale
    content = found[0].content or ""
    assert "app/graph.py:40: vision_inspector wired: start -> vision_inspector" in content
    assert all(line in content for line in STUB_LINES)
    # a node that is not a stub, said to work: nothing
    assert _facts("The RepoInvestigator clones the repository into a temporary directory.") \
        == []


def test_an_honest_report_on_a_stub_node_contradicts_nothing() -> None:
    # said to be a stub or planned, hedged, future, or under a plan's lead-in
    assert _facts("The VisionInspector is a stub for now; it returns a placeholder.",
                  "VisionInspector: not yet implemented.",
                  "The VisionInspector will classify diagrams.",
                  "Once built, the VisionInspector classifies diagrams.",
                  "The VisionInspector can classify diagrams with a vision model.") == []
    assert _facts("The VisionInspector classifies diagrams.", lead="The Forward Plan:") == []
    # the report admits the stub elsewhere: its description is the design
    assert _facts("The VisionInspector classifies diagrams with GPT-4o.",
                  "Known gaps: the VisionInspector is still a placeholder.") == []


def test_a_wired_stub_node_is_found_through_a_package_re_export(tmp_path: Path) -> None:
    # the node's module holds no word the prefilter looks for, and the graph imports the
    # node function through its package's __init__
    files = {
        "app/__init__.py": "",
        "app/detectives/__init__.py": "from .vision import vision_node\n",
        "app/detectives/vision.py": """
            def vision_node(state):
                return {"notes": ["diagram reading not implemented"]}
            """,
        "app/graph.py": """
            from langgraph.graph import StateGraph, START, END
            from .detectives import vision_node

            graph = StateGraph(dict)
            graph.add_node("vision", vision_node)
            graph.add_edge(START, "vision")
            graph.add_edge("vision", END)
            """,
    }
    _findings, graph = code_findings(tmp_path, write_repo(tmp_path, files), workers=1)
    assert graph is not None and list(graph.stub_nodes) == ["vision"]
    assert graph.stub_nodes["vision"] == [
        "app/detectives/vision.py:2: def vision_node(state):",
        'app/detectives/vision.py:3: return {"notes": ["diagram reading not implemented"]}']
