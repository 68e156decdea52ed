"""The last node's whole-state return doubles add-reducer lists only in the state the run
leaves: no defect unless the code that runs the graph reads those lists from it
(`final_state`, `stateflow.state.doubled_lists`)."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.state import Finding

from . import graph_defects as copies
from .graph_defects import GRAPH, NODES, STATE
from .test_code_ast_graph import write_repo

# the last node hands the state back, its add-reducer lists in it, after writing its report
LAST = copies.edit(NODES, (
    'def chief_justice(state):\n    return {"final_report": str(len(state["opinions"]))}',
    'def chief_justice(state):\n    state["final_report"] = str(len(state["opinions"]))\n'
    '    return state'))

MAIN = '''
import uuid

from graph import graph


def main(url):
    result = graph.invoke({"repo_url": url})
    print(result.get("final_report"), result["repo_url"])
'''

SAVED = '''
import uuid

from langgraph.checkpoint.memory import MemorySaver

from graph import builder

app = builder.compile(checkpointer=MemorySaver())


def main(url):
    run_id = f"audit_{uuid.uuid4().hex[:8]}"
    config = {"configurable": {"thread_id": run_id}}
    app.invoke({"repo_url": url}, config=config)


def show():
    print(app.get_state({"configurable": {"thread_id": "audit_001"}}))
'''


def _doubled(tmp_path: Path, main: str | None) -> Finding:
    files = {"state.py": STATE, "nodes.py": LAST, "graph.py": GRAPH,
             **({"main.py": main} if main is not None else {})}
    findings, _ = code_findings(tmp_path, write_repo(tmp_path, files))
    return next(f for f in findings if f.facet == "state.doubled_lists")


def test_the_last_node_doubling_what_no_caller_reads_doubles_nothing(tmp_path: Path) -> None:
    fact = _doubled(tmp_path, MAIN)
    assert not fact.found and fact.data["unread"] == {"chief_justice": ["evidences", "opinions"]}
    assert "its only edge goes to END" in fact.rationale
    assert "nodes.py" in (fact.content or "")  # the return is still quoted
    # a fresh thread id per run: the checkpoint is never run again, and the one read by a
    # fixed name is never this run's
    assert not _doubled(tmp_path / "saved", SAVED).found


def test_a_caller_that_reads_the_doubled_list_keeps_the_defect(tmp_path: Path) -> None:
    read = MAIN.replace('result["repo_url"]', 'len(result["opinions"])')
    assert _doubled(tmp_path / "read", read).found
    handed = MAIN.replace('print(result.get("final_report"), result["repo_url"])',
                          "return result")
    assert _doubled(tmp_path / "handed", handed).found
    # no call of the graph found: what reads the final state is not known
    assert _doubled(tmp_path / "none", None).found
    # one thread id for every run: the next run starts from the doubled list
    fixed = SAVED.replace('f"audit_{uuid.uuid4().hex[:8]}"', '"audit_001"')
    assert _doubled(tmp_path / "fixed", fixed).found
    state_read = SAVED.replace('"thread_id": "audit_001"', '"thread_id": run_id')
    assert _doubled(tmp_path / "state", state_read).found
