"""Terminal output: progress on stderr while the graph runs, a summary table at the end."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn
from rich.table import Table

from automaton_auditor.state import AuditReport
from automaton_auditor.text import printable

PHASES = ("context_builder", "repo_investigator", "doc_analyst", "vision_inspector",
          "evidence_aggregator", "chief_justice", "report_writer")


class RunProgress:
    """Shows each finished node, and the judges as a bar, on stderr."""

    def __init__(self, console: Console, judge_calls: int, enabled: bool = True) -> None:
        self.console = console
        self.enabled = enabled
        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), console=console, transient=True,
                                 disable=not enabled)
        self.steps = self.progress.add_task("detectives", total=4)
        self.judges = self.progress.add_task("judges", total=judge_calls, visible=False)
        self.started = False

    def __enter__(self) -> RunProgress:
        # The display starts with the first node: input refused before the graph, or an
        # audit answered from the cache, prints nothing but its own lines.
        self.started = False
        return self

    def __exit__(self, *exc: object) -> None:
        if self.started:
            self.progress.__exit__(None, None, None)

    def node_done(self, node: str, update: Any, timings: dict[str, float]) -> None:
        """Record one node's update."""
        if not self.started:
            self.progress.__enter__()
            self.started = True
        if node == "context_builder" and isinstance(update, dict) and not update.get("input_ok"):
            # bad input: the CLI prints one error line, nothing else
            self.enabled = False
            return
        if node == "judge":
            self.progress.update(self.judges, advance=1, visible=True)
            return
        if node in PHASES and self.enabled:
            seconds = timings.get(node)
            took = f" {seconds:.2f}s" if seconds is not None else ""
            self.console.print(f"[green]✓[/green] {node}{took}")
            self.progress.advance(self.steps)


def shown(text: str) -> str:
    """Text from outside the auditor (a rubric name, the target) as one terminal line: no
    control character to drive the terminal, no Rich markup to restyle it."""
    return escape(printable(text, one_line=True))


def summary_table(report: AuditReport) -> Table:
    """One row per criterion, with the overall score as the caption."""
    table = Table(title=f"Audit of {shown(report.repo_url)}",
                  caption=f"overall {report.overall_score:.2f}/5 — {report.verdict} · "
                          f"{report.bench}")
    table.add_column("Criterion")
    table.add_column("Score", justify="right")
    table.add_column("Deciding rule")
    table.add_column("Dissent", justify="center")
    for result in report.criteria:
        colour = {1: "red", 2: "red", 3: "yellow"}.get(result.final_score, "green")
        score = f"[{colour}]{result.final_score}[/{colour}]" if result.judged else "—"
        table.add_row(shown(result.dimension_name), score,
                      result.deciding_rule if result.judged else "not judged",
                      "yes" if result.dissent_summary else "")
    return table
