"""The records of an audit: detectives' findings, the evidence judges see, their opinions,
the Chief Justice's rulings, the report, and the facts detectives hand the aggregator.

Detectives produce `Finding`s (plain facts); a detective node turns each finding into one
`Evidence` per rubric dimension it bears on. Judges produce `JudicialOpinion`s; the Chief
Justice produces `CriterionResult`s; the report writer renders an `AuditReport`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from automaton_auditor.text import clip

CONTENT_LIMIT = 2000

Source = Literal["repo", "doc", "vision", "aggregator"]
# The order evidence is gathered and reported in.
SOURCES: tuple[Source, ...] = ("repo", "doc", "vision", "aggregator")
Judge = Literal["Prosecutor", "Defense", "TechLead"]
JUDGES: tuple[Judge, ...] = ("Prosecutor", "Defense", "TechLead")
# Which rubric pattern a fact bears on: "success" facts support a high score when found,
# "failure" facts support a low score when found, "neutral" facts are context only.
Pattern = Literal["success", "failure", "neutral"]


def _cut(text: str | None, limit: int = CONTENT_LIMIT) -> str | None:
    return None if text is None else clip(text, limit)


class Finding(BaseModel):
    """One fact a detective tool established, before it is routed to rubric dimensions.

    `facet` names the kind of fact (for example ``graph.fan_out`` or ``doc.cited_paths``);
    the rubric routing decides which dimensions a facet bears on.
    """

    model_config = ConfigDict(frozen=True)

    facet: str
    goal: str
    found: bool
    pattern: Pattern = "neutral"
    content: str | None = None
    location: str
    rationale: str
    confidence: float = Field(ge=0.0, le=1.0)
    security: bool = False
    data: dict[str, Any] = Field(default_factory=dict)

    @field_validator("content")
    @classmethod
    def _cut_content(cls, value: str | None) -> str | None:
        return _cut(value)


class Evidence(Finding):
    """A fact as the judges see it: a finding bound to one rubric dimension.

    `evidence_id` is derived from the content and location, so the same commit, report and
    rubric always give the same ids.
    """

    evidence_id: str = ""
    source: Source
    dimension: str

    @model_validator(mode="after")
    def _derive_id(self) -> Evidence:
        if not self.evidence_id:
            key = json.dumps(
                [self.source, self.dimension, self.facet, self.goal, self.location,
                 self.found, self.content],
                ensure_ascii=False,
            )
            digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:10]
            object.__setattr__(self, "evidence_id", f"{self.source[:3]}-{digest}")
        return self

    @property
    def supports_success(self) -> bool:
        """True when this fact argues for the success pattern."""
        return self.found and self.pattern == "success"

    @property
    def supports_failure(self) -> bool:
        """True when this fact argues for the failure pattern (a bad thing found, or a
        required thing missing)."""
        if self.pattern == "failure":
            return self.found
        return self.pattern == "success" and not self.found

    @property
    def limitation(self) -> str | None:
        """Why the auditor could not establish this fact (``data["limitation"]``, e.g.
        diagrams that need a vision model), or None: then the fact says nothing about the
        audited work, for or against."""
        reason = self.data.get("limitation")
        return str(reason) if reason else None

    @property
    def confirmed_security_flaw(self) -> bool:
        """A security finding established by code, with high confidence."""
        return self.security and self.found and self.confidence >= 0.75

    @classmethod
    def from_finding(cls, finding: Finding, source: Source, dimension: str) -> Evidence:
        """Bind a finding to one rubric dimension."""
        return cls(source=source, dimension=dimension, **finding.model_dump())


class JudicialOpinion(BaseModel):
    """One judge's opinion on one criterion. Unknown fields are refused: this takes model
    output."""

    model_config = ConfigDict(extra="forbid")

    judge: Judge
    criterion_id: str
    score: int = Field(ge=1, le=5)
    argument: str
    cited_evidence: list[str] = Field(default_factory=list)
    charges: list[str] = Field(default_factory=list)
    mitigations: list[str] = Field(default_factory=list)
    remediation: str | None = None
    # Set by the bench, never by a model: a degraded opinion failed to parse after retries
    # and is excluded by the Chief Justice.
    degraded: bool = False
    round: int = Field(default=1, ge=1, le=2)
    # Set by the LLM bench: token counts and attempts of the call(s) behind this opinion.
    usage: dict[str, int] | None = None


class RuleApplication(BaseModel):
    """One named synthesis rule the Chief Justice applied to a criterion."""

    rule: str
    detail: str
    score_before: float | None = None
    score_after: float | None = None


class CriterionResult(BaseModel):
    """The Chief Justice's ruling on one rubric dimension."""

    model_config = ConfigDict(extra="forbid")

    dimension_id: str
    dimension_name: str
    target_artifact: str = "github_repo"
    final_score: int = Field(ge=1, le=5)
    judge_opinions: list[JudicialOpinion]
    dissent_summary: str | None = None
    remediation: str
    deciding_rule: str
    rules_applied: list[RuleApplication] = Field(default_factory=list)
    overruled: list[str] = Field(default_factory=list)
    evidence_ids: list[str] = Field(default_factory=list)
    # Round-1 opinions a re-evaluation round superseded (shown in the report beside round 2).
    earlier_opinions: list[JudicialOpinion] = Field(default_factory=list)
    # Why this criterion caps the overall verdict band (a confirmed security or integrity
    # failure), or None.
    verdict_cap: str | None = None
    # False when the input this criterion reads could not be used (repository not acquired,
    # report unreadable) or no judge gave a valid opinion: `final_score` is then no verdict;
    # the overall score leaves the criterion out and the report lists it with the reason.
    judged: bool = True
    not_judged_reason: str = ""

    @property
    def score_label(self) -> str:
        """``3/5``, or ``not judged``."""
        return f"{self.final_score}/5" if self.judged else "not judged"


class AuditReport(BaseModel):
    """The whole audit, as written to JSON and rendered to Markdown."""

    model_config = ConfigDict(extra="forbid")

    repo_url: str
    commit: str | None = None
    report_path: str | None = None
    report_sha256: str | None = None
    rubric_name: str = ""
    rubric_version: str = ""
    bench: str = ""
    executive_summary: str
    overall_score: float
    verdict: str = ""
    criteria: list[CriterionResult]
    remediation_plan: str
    errors: list[str] = Field(default_factory=list)
    evidence: dict[str, list[Evidence]] = Field(default_factory=dict)
    verified_paths: list[str] = Field(default_factory=list)
    # Cited as in the repository and not in it (a run's output the code writes included: its
    # fact, claims.run_outputs, says it invents nothing).
    hallucinated_paths: list[str] = Field(default_factory=list)
    # Cited files the report presents as future work (absent, neither verified nor
    # hallucinated).
    planned_paths: list[str] = Field(default_factory=list)
    generated_at: str = ""
    run_id: str = ""
    # Token totals of the LLM bench (empty for the offline bench).
    usage: dict[str, int] = Field(default_factory=dict)
    # The report diagram whose flow was compared with the code (drawn beside the code graph).
    report_diagram: DiagramFacts | None = None


# --- Facts shared between detectives and the aggregator -------------------------------------


class RebuiltGraph(BaseModel):
    """A LangGraph topology rebuilt statically from the audited code (never executed)."""

    builder: str = ""
    location: str = ""
    nodes: list[str] = Field(default_factory=list)
    edges: list[tuple[str, str]] = Field(default_factory=list)
    conditional_sources: list[str] = Field(default_factory=list)
    # The sources whose routers can change where the flow goes (no static edge beside them,
    # more than one place to go); None when not read.
    routing_sources: list[str] | None = None
    fan_out: dict[str, list[str]] = Field(default_factory=dict)
    fan_in: dict[str, list[str]] = Field(default_factory=dict)
    linear: bool = True
    # Nodes whose function does nothing (a stub), each with the lines that show it.
    stub_nodes: dict[str, list[str]] = Field(default_factory=dict)


class CodeNames(BaseModel):
    """The names the repository's Python code uses, so the report's statements about what a
    file calls can be read against it (`forensics.code.names`)."""

    # Every identifier in any tracked Python file (names, attributes, imports, definitions).
    identifiers: list[str] = Field(default_factory=list)
    # Audited file -> module-qualified names it uses (imports resolved: "tempfile.mkdtemp")
    # -> its first use, "line: source text".
    modules: dict[str, dict[str, str]] = Field(default_factory=dict)
    # The text of the audited files' string constants and of the prompt files, each
    # normalised to lower-case words joined by one space, so a quote of a prompt can be
    # looked up; None when not read, or when there was more text than kept (a missing quote
    # then proves nothing).
    strings: list[str] | None = None
    # Python files (not package __init__ files) that hold no code: blank, or only a
    # docstring, ``pass`` or ``...``.
    empty: list[str] = Field(default_factory=list)
    # Paths the code builds for the files a run writes, run-time parts as "*"
    # ("*/audit/report_*.md", `forensics.code.output_paths`) -> "path:line: source".
    outputs: dict[str, str] = Field(default_factory=dict)
    # The audited files' own names (not comments or strings) that speak of retries or
    # attempts (`forensics.code.names.RETRY_NAME`); None when not read.
    retry_names: list[str] | None = None


class CitedPath(BaseModel):
    """A file path the report cites, as written and normalised."""

    raw: str
    path: str
    page: int | None = None
    context: str = ""
    bare_name: bool = False
    # "owner/name" when the citation is a GitHub URL (other repositories are not checked).
    source_repo: str | None = None
    # Other spellings to try against the repository (a repaired break, a second extractor).
    variants: list[str] = Field(default_factory=list)
    # How the path was rebuilt from broken text ("joined", "underscore"), if it was.
    repair: str | None = None
    # Counts only when it matches a file (an unconfirmed repair, an unknown extension).
    verify_only: bool = False
    # Some citation presents it as future work; some citation asserts it exists.
    future: bool = False
    asserted: bool = True


class FeatureClaim(BaseModel):
    """A claim the report makes about the implementation (e.g. parallel judges)."""

    feature: str
    sentence: str
    page: int | None = None
    # The section around a gap or a denial (`forensics.pdf.qualifiers`): the heading and
    # lead-in line that introduce it, and the text around it, which qualify the sentence.
    lead: str = ""
    near: str = ""


class ReportFacts(BaseModel):
    """What the doc detective hands the aggregator."""

    readable: bool = False
    page_count: int = 0
    cited_paths: list[CitedPath] = Field(default_factory=list)
    claims: list[FeatureClaim] = Field(default_factory=list)


class DiagramFacts(BaseModel):
    """One diagram candidate found in the report."""

    page: int
    kind: str = "raster"  # raster | scan | vector | mermaid | dot | text_art | arrow
    width: int = 0
    height: int = 0
    labels: list[str] = Field(default_factory=list)
    edges: list[tuple[str, str]] = Field(default_factory=list)
    nearby_text: str = ""
    analysis: dict[str, Any] = Field(default_factory=dict)
    # Deterministic extras from the extractor (bbox, conditional edges, decisions, source...).
    data: dict[str, Any] = Field(default_factory=dict)
