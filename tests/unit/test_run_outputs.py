"""Cited files that are one run's output of the audited code (a path the code builds from a
timestamp), and reports with nothing to cross-reference: neither earns a hallucinated-path
charge nor a "nothing invented" credit."""

from __future__ import annotations

import ast
from pathlib import Path

from automaton_auditor.forensics.code.names import code_names
from automaton_auditor.forensics.code.output_paths import output_templates, run_output
from automaton_auditor.forensics.crosscheck import cross_check
from automaton_auditor.forensics.pdf.citations import extract_cited_paths
from automaton_auditor.forensics.pdf.claims import extract_feature_claims
from automaton_auditor.judging.caps import confirmed_caps
from automaton_auditor.judging.extras import missing_extra
from automaton_auditor.state import CodeNames, Evidence, Finding, RebuiltGraph, ReportFacts

# selambeyu/automaton-auditor src/nodes/justice.py:261-263 (the chief justice's report writer)
JUSTICE = '''
from datetime import datetime
from pathlib import Path

def chief_justice_node(state):
    repo_root = Path(__file__).resolve().parent.parent.parent
    timestamp = datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    out_path = repo_root / "audit" / f"report_{timestamp}.md"
    print(f"Report saved to: audit/report_{timestamp}.md")
    return {"report_path": str(out_path)}
'''
FILES = ["src/graph.py", "src/nodes/justice.py", "audit/report_onself_generated/r.md"]
SELF_AUDIT = (11, "Self-audit (`audit/report_2026-02-27_22-11-15.md`, overall 2.5 / 5): the "
                  "graph in src/graph.py passed.")


def _templates(source: str) -> dict[str, str]:
    return output_templates(ast.parse(source), "src/nodes/justice.py", source.splitlines())


def _facts(*passages: tuple[int, str]) -> ReportFacts:
    return ReportFacts(readable=True, page_count=20, cited_paths=extract_cited_paths(passages),
                       claims=extract_feature_claims(passages))


def _dossier(findings: list[Finding]) -> list[Evidence]:
    return [Evidence(**f.model_dump(), source="aggregator", dimension="report_accuracy")
            for f in findings if f.facet.startswith("claims.")]


def test_the_code_builds_its_report_path_from_a_timestamp() -> None:
    templates = _templates(JUSTICE)
    # the message around the path is no path; the folder chain and the timestamp are followed
    assert list(templates) == ["*/audit/report_*-*-*_*-*-*.md"]
    assert templates["*/audit/report_*-*-*_*-*-*.md"].startswith("src/nodes/justice.py:8: ")
    assert run_output("audit/report_2026-02-27_22-11-15.md", templates)
    assert not run_output("audit/report_final.md", templates)  # no timestamp there
    assert not run_output("reports/report_2026-02-27_22-11-15.md", templates)  # another folder


def test_only_run_outputs_under_known_folders_are_templates() -> None:
    source = '''
import os
def write(url, is_self, name, run):
    target = "report_onself_generated" if is_self else "report_onpeer_generated"
    out_dir = os.path.join("audit", target)
    md = os.path.join(out_dir, f"report_{name}.md")
    log = "logs/trace_%s.jsonl" % run
    code = f"src/nodes/{name}.py"
    anywhere = os.path.join(url, f"report_{name}.md")
    fixed = "audit/summary.md"
    bare = f"audit/{name}.md"
    return md, log, code, anywhere, fixed, bare
'''
    # both branches of the folder choice; not a source file, a folder known only at run
    # time, a fixed name or a name that is nothing but the run-time part
    assert sorted(_templates(source)) == ["audit/report_onpeer_generated/report_*.md",
                                          "audit/report_onself_generated/report_*.md",
                                          "logs/trace_*.jsonl"]
    assert not run_output("audit/report_bypeer_received/report_peer_abc.md",
                          _templates(source))


def test_a_cited_run_output_is_absent_but_invents_nothing() -> None:
    """selambeyu/automaton-auditor: p.11 cites `audit/report_2026-02-27_22-11-15.md`, the
    output of one run of its own chief justice (justice.py:263), never committed: listed as
    not in the repository, but its fact says it invents nothing."""
    names = code_names_of(JUSTICE)
    findings, verified, hallucinated, planned = cross_check(_facts(SELF_AUDIT), FILES, None,
                                                            names=names)
    assert (verified, hallucinated) == (["src/graph.py"], ["audit/report_2026-02-27_22-11-15.md"])
    assert planned == []
    outputs = [f for f in findings if f.facet == "claims.run_outputs"]
    assert [(f.found, f.pattern) for f in outputs] == [(False, "success")]
    assert "justice.py:8" in (outputs[0].content or "")
    # not checkable, nothing invented: no full marks, no hallucinated-path cap of 2
    dossier = _dossier(findings)
    assert [row.cap for row, _ in confirmed_caps("report_accuracy", dossier)] == [4]
    assert missing_extra(next(e for e in dossier if e.facet == "claims.run_outputs"))
    # without the code that writes it, the same citation is an invented file (capped at 2)
    findings, _, hallucinated, _ = cross_check(_facts(SELF_AUDIT), FILES, None)
    assert hallucinated == ["audit/report_2026-02-27_22-11-15.md"]
    assert not [f for f in findings if f.facet == "claims.run_outputs"]
    assert 2 in [row.cap for row, _ in confirmed_caps("report_accuracy", _dossier(findings))]


def code_names_of(source: str) -> CodeNames:
    """The code's names from a one-file repository holding `source` as the justice node."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "src" / "nodes" / "justice.py"
        path.parent.mkdir(parents=True)
        path.write_text(source, encoding="utf-8")
        return code_names(Path(tmp), ["src/nodes/justice.py"])


def test_a_report_with_nothing_to_cross_reference_earns_no_credit() -> None:
    """eyorata/automation_auditor: the final PDF is a one-page auto-generated stub that cites
    no path and makes one checkable claim; "it invents nothing" held only because it says
    nothing, and lifted report accuracy to 4."""
    stub = (1, "Chief Justice synthesized parallel judicial opinions using deterministic "
               "rules. Overall 1.00/5.")
    graph = RebuiltGraph(nodes=["judge_dispatch", "prosecutor", "defense", "techlead"],
                         edges=[("judge_dispatch", n) for n in ("prosecutor", "defense",
                                                                "techlead")],
                         fan_out={"judge_dispatch": ["defense", "prosecutor", "techlead"]},
                         linear=False)
    findings = cross_check(_facts(stub), FILES, graph).findings
    # the one claim is confirmed, and that is all the credit there is
    assert [f.facet for f in findings if f.found and f.pattern == "success"] == [
        "claims.features"]
    nothing = [f for f in findings if f.data.get("cited") == 0]
    assert [(f.found, f.pattern) for f in nothing] == [(False, "neutral")]
    assert "Nothing to cross-reference" in nothing[0].rationale


def test_a_report_that_says_enough_to_check_keeps_the_credit() -> None:
    """Natnael-Alemseged/Github-Evaluator@interim: two pages that cite no folder-qualified
    path, but name repo_tools.py (it exists) and state claims; nothing of it is refuted."""
    text = (2, "The graph is built by analyze_graph_structure in repo_tools.py. The judges "
               "run in parallel.")
    findings = cross_check(_facts(text), [*FILES, "src/tools/repo_tools.py"], None).findings
    nothing = [f for f in findings if f.data.get("cited") == 0]
    assert [(f.found, f.pattern) for f in nothing] == [(True, "success")]


def test_a_report_none_of_whose_claims_could_be_checked_says_so() -> None:
    """amare1990@interim, ephrata1888@interim: no path cited, and every claim about the graph
    "not checkable" (no graph rebuilt to check them on): "the report invents nothing the code
    refutes" says that none was checked."""
    text = (1, "The judges run in parallel. The graph routes with conditional edges.")
    findings = cross_check(_facts(text), FILES, None).findings
    nothing = [f for f in findings if f.data.get("cited") == 0]
    assert [(f.found, f.pattern) for f in nothing] == [(True, "success")], nothing
    assert nothing[0].data["borne_out"] == 0
    assert "none was checked against the code" in nothing[0].rationale
