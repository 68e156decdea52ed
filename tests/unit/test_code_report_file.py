"""``justice.markdown_report``: the verdict written to a Markdown file, read from what the code
writes (a file opened for writing, its path, the headings around it), never from names."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.state import Finding

from .test_code_ast_graph import write_repo
from .test_code_synthesis import GRAPH

JUSTICE = '''
def chief_justice_node(state):
    scores = [o.score for o in state["opinions"]]
    lines = ["# Audit", "## Executive Summary", f"Overall {min(scores)}",
             "## Criterion Breakdown"]
    for o in state["opinions"]:
        lines.append(f"### {o.criterion}")
    lines.append("## Remediation Plan")
    return {"final_report_markdown": "\\n".join(lines)}
'''


def _fact(tmp_path: Path, files: dict[str, str]) -> Finding:
    names = write_repo(tmp_path, {"graph.py": GRAPH, "nodes/justice.py": JUSTICE, **files})
    findings, _ = code_findings(tmp_path, names)
    return next(f for f in findings if f.facet == "justice.markdown_report")


def test_a_runner_that_writes_the_synthesis_text_to_a_file_writes_the_markdown_report(
        tmp_path: Path) -> None:
    # run.py holds none of the code pass's trigger words: the writer is still read
    fact = _fact(tmp_path, {"run.py": '''
import sys
from pathlib import Path

def main(app):
    out = app.invoke({"opinions": []})
    md = out.get("final_report_markdown") or ""
    if not md:
        md = "nothing"
    Path(sys.argv[1]).write_text(md, encoding="utf-8")

main(None)
'''})
    assert fact.found, fact.rationale
    assert fact.location == "run.py:10"
    assert fact.data["sections"] == ["Executive Summary", "Criterion Breakdown",
                                     "Remediation Plan"]


def test_a_report_that_is_only_printed_is_no_markdown_file(tmp_path: Path) -> None:
    fact = _fact(tmp_path, {"run.py": '''
def main(app):
    out = app.invoke({"opinions": []})
    print(out["final_report_markdown"])

main(None)
'''})
    assert not fact.found
    assert "No code writes" in fact.rationale


def test_a_log_file_beside_the_headings_is_no_markdown_report(tmp_path: Path) -> None:
    fact = _fact(tmp_path, {"run.py": '''
def _log(line):
    with open("logs/run.log", "a") as f:
        f.write(line)

def main(app):
    out = app.invoke({"opinions": []})
    _log(str(out["final_report_markdown"]))
    print("# Executive Summary", "## Remediation Plan")

main(None)
'''})
    assert not fact.found, fact.rationale


def test_a_writer_nothing_calls_writes_nothing(tmp_path: Path) -> None:
    # (a file the code pass parses: "judges" is one of its trigger words; a file it skips
    # names every word it holds, its own functions included)
    fact = _fact(tmp_path, {"report_writer.py": '''
def save_markdown(report, judges, path="audit/report.md"):
    with open(path, "w") as handle:
        handle.write("# Executive Summary\\n## Remediation Plan\\n" + report)
'''})
    assert not fact.found
    assert "save_markdown, which no code calls" in fact.rationale


def test_a_markdown_path_with_sections_in_the_writers_callees(tmp_path: Path) -> None:
    # the file name is a parameter's default; the headings are in the function that builds
    # the text, which the writer's caller calls
    fact = _fact(tmp_path, {"nodes/report.py": '''
from pathlib import Path

FILENAME = "audit_report.md"

def render(report):
    return "\\n".join(["# Executive Summary", "## Criterion Breakdown", str(report)])

def save(markdown, out_dir, filename=FILENAME):
    path = Path(out_dir) / filename
    path.write_text(markdown)
    return path

def report_node(state):
    save(render(state), "audit")
    return {}
'''})
    assert fact.found, fact.rationale
    assert fact.data["writes"] == ["nodes/report.py:11"]
    assert fact.data["sections"][:2] == ["Executive Summary", "Criterion Breakdown"]


def test_an_image_written_beside_the_report_is_no_markdown_file(tmp_path: Path) -> None:
    # bytes read out of a result by key ("image"), but written in binary: no Markdown text
    fact = _fact(tmp_path, {"nodes/vision.py": '''
def save_images(doc, judges):
    for image in doc.images():
        with open(image.path, "wb") as handle:
            handle.write(image.data["image"])

def vision_node(state):
    save_images(state["doc"], 3)
    return {}
'''})
    assert not fact.found and fact.data["writes"] == [], fact.rationale


def test_an_earlier_runs_report_the_code_names_is_no_template(tmp_path: Path) -> None:
    # the committed output of an earlier run is no template of what the code writes
    fact = _fact(tmp_path, {"audit/report.md": "# Executive Summary\n## Remediation Plan\n",
                            "run.py": '''
import os

def main(app, judges):
    out = app.invoke({})
    with open(os.path.join("audit", "report.md"), "w") as handle:
        handle.write(str(out))

main(None, 3)
'''})
    assert fact.data["writes"] == ["run.py:6"] and fact.data["templates"] == []


def test_the_headings_are_named_as_the_code_writes_them(tmp_path: Path) -> None:
    """A summary, one heading per criterion and a remediation under each: the fact quotes
    those headings, not the rubric's section names as if the code wrote them."""
    names = write_repo(tmp_path, {"run.py": '''
def main(app):
    report = app.invoke({"opinions": []})["final_report"]
    with open("audit/report.md", "w") as f:
        f.write(f"## Executive Summary\\n{report.summary}\\n")
        for criterion in report.criteria:
            f.write(f"### {criterion.name}\\n")
            f.write(f"\\n#### Remediation\\n{criterion.remediation}\\n")

main(None)
'''})
    fact = next(f for f in code_findings(tmp_path, names)[0]
                if f.facet == "justice.markdown_report")
    assert fact.found, fact.rationale
    assert ('the headings "## Executive Summary" (Executive Summary), "### {…}" (one per '
            'item: Criterion Breakdown), "#### Remediation" (Remediation Plan)'
            in fact.rationale), fact.rationale


SERIALIZER = '''
from pydantic import BaseModel

class AuditReport(BaseModel):
    summary: str
    plan: str

    def to_markdown(self) -> str:
        lines = ["# Audit", f"## Executive Summary\\n{self.summary}", "## Criterion Breakdown"]
        lines.append("## Remediation Plan")
        lines.append(self.plan)
        return "\\n".join(lines)
'''


def test_a_markdown_serializer_whose_text_is_only_offered_for_download(
        tmp_path: Path) -> None:
    """No file is written, but a method builds the Markdown with every section: the fact
    says where its text goes (a download, a print) and does not call the sections missing."""
    fact = _fact(tmp_path, {"report_model.py": SERIALIZER, "app.py": '''
import streamlit as st

def show(report):
    st.markdown(report.to_markdown())
    md = report.to_markdown()
    st.download_button(label="Download", data=md, file_name="audit_report.md")
    print(report.to_markdown())
'''})
    assert not fact.found
    assert fact.location == "report_model.py:8"
    assert "Executive Summary" not in fact.goal and "written to a file" in fact.goal
    assert "report_model.py:8 AuditReport.to_markdown builds the report as Markdown" \
        in fact.rationale, fact.rationale
    assert ("handed to st.download_button (as 'audit_report.md') at app.py:7"
            in fact.rationale), fact.rationale
    assert "handed to st.markdown at app.py:5" in fact.rationale
    assert "handed to print at app.py:8" in fact.rationale
    assert fact.data["serializer"] == "report_model.py:8"


def test_a_serializer_nothing_calls_and_one_stored_on_an_attribute(tmp_path: Path) -> None:
    fact = _fact(tmp_path / "idle", {"report_model.py": SERIALIZER})
    assert not fact.found
    assert fact.rationale.endswith("and returns it; nothing in the repository calls it."), \
        fact.rationale
    fact = _fact(tmp_path / "stored", {"report_model.py": SERIALIZER, "app.py": '''
def keep(holder, report):
    holder.state.report_md = report.to_markdown()
'''})
    assert "its text is stored in holder.state.report_md at app.py:3" in fact.rationale, \
        fact.rationale
