"""The rubric: loading, validation and routing of facts to dimensions.

The rubric JSON is the single source of truth: its dimensions are the criteria the judges
rule on, its synthesis rules name what the Chief Justice applies, and its instructions say
which facts bear on which dimension (see `facets_for`).
"""

from __future__ import annotations

import json
import math
import re
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from automaton_auditor.safefile import (
    UnsafeFile,
    UnsafeJson,
    json_path,
    json_problem,
    loads_untrusted,
    read_bounded_text,
)
from automaton_auditor.settings import ParsedMemo
from automaton_auditor.text import clip, printable

TargetArtifact = Literal["github_repo", "pdf_report", "pdf_images"]
DEFAULT_RUBRIC_FILE = "automaton_auditor_rubric.json"
# Caps on a rubric file (hostile input): checked before and while reading it.
MAX_RUBRIC_BYTES = 5_000_000
MAX_DIMENSIONS = 200
MAX_INT_DIGITS = 30


class RubricError(ValueError):
    """A rubric that cannot be used; the message names the JSON path of the first problem.

    The message is made `printable` here, where it is built: it quotes the file's own keys,
    which may hold any character (a NUL, an escape), and it reaches the terminal, a batch
    summary and the queue's records."""

    def __init__(self, message: str) -> None:
        super().__init__(printable(message, one_line=True))


class JudicialLogic(BaseModel):
    """Per-persona guidance a rubric may give for one dimension."""

    model_config = ConfigDict(extra="forbid")

    prosecutor: str | None = None
    defense: str | None = None
    tech_lead: str | None = None

    def for_judge(self, judge: str) -> str | None:
        """The guidance for a judge named as in `JudicialOpinion.judge`."""
        return {"Prosecutor": self.prosecutor, "Defense": self.defense,
                "TechLead": self.tech_lead}.get(judge)


class Dimension(BaseModel):
    """One rubric criterion."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    name: str = Field(min_length=1)
    target_artifact: TargetArtifact
    forensic_instruction: str = Field(min_length=1)
    success_pattern: str = ""
    failure_pattern: str = ""
    judicial_logic: JudicialLogic | None = None
    # Our own extensions, optional in every rubric: explicit routing and concept terms.
    evidence_facets: list[str] | None = None
    concepts: list[str] | None = None


class RubricMetadata(BaseModel):
    """Who the rubric is for and which version it is."""

    model_config = ConfigDict(extra="allow")

    rubric_name: str = Field(min_length=1)
    grading_target: str = ""
    version: str = ""


class Rubric(BaseModel):
    """A validated rubric."""

    model_config = ConfigDict(extra="forbid")

    rubric_metadata: RubricMetadata
    dimensions: list[Dimension] = Field(min_length=1)
    synthesis_rules: dict[str, str] = Field(default_factory=dict)

    @property
    def name(self) -> str:
        """The rubric's display name."""
        return self.rubric_metadata.rubric_name

    @property
    def version(self) -> str:
        """The rubric's version string."""
        return self.rubric_metadata.version

    def to_state(self) -> dict[str, Any]:
        """The rubric as graph-state data (remembered: see `from_state`)."""
        data = self.model_dump()
        _PARSED.remember(data, self)
        return data

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> Rubric:
        """The rubric in the graph state: a dict equal to one this process dumped or parsed
        is answered without validating it again (a run parses its rubric once)."""
        hit = _PARSED.get(data)
        if isinstance(hit, Rubric):
            return hit
        rubric = cls.model_validate(data)
        _PARSED.remember(data, rubric)
        return rubric

    def dimension(self, dimension_id: str) -> Dimension:
        """The dimension with this id (KeyError if absent)."""
        for dim in self.dimensions:
            if dim.id == dimension_id:
                return dim
        raise KeyError(dimension_id)


_PARSED = ParsedMemo(4)


def parse_rubric(data: Any) -> Rubric:
    """Validate rubric data; raise RubricError naming the JSON path of the first problem."""
    problem = json_problem(data)  # too deep, or a lone surrogate no report could write
    if problem:
        raise RubricError(problem)
    dims = data.get("dimensions") if isinstance(data, dict) else None
    if isinstance(dims, list) and len(dims) > MAX_DIMENSIONS:
        raise RubricError(f"$.dimensions: {len(dims)} dimensions, more than {MAX_DIMENSIONS}")
    try:
        rubric = Rubric.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise RubricError(f"{json_path(tuple(first['loc']))}: {first['msg']}") from None
    seen: set[str] = set()
    for index, dim in enumerate(rubric.dimensions):
        if dim.id in seen:
            raise RubricError(f"$.dimensions[{index}].id: duplicate id {dim.id!r}")
        seen.add(dim.id)
    return rubric


def default_rubric_text() -> str:
    """The embedded default rubric (shipped in the package, mirrored in `rubric/`)."""
    return resources.files("automaton_auditor").joinpath("data", DEFAULT_RUBRIC_FILE).read_text(
        encoding="utf-8"
    )


def read_rubric_text(path: Path) -> str:
    """A rubric file's text, read as hostile input (`safefile.read_bounded`: a regular file,
    at most MAX_RUBRIC_BYTES)."""
    try:
        return read_bounded_text(path, MAX_RUBRIC_BYTES, "rubric")
    except UnsafeFile as exc:
        raise RubricError(str(exc)) from None


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(text)} digits")
    return int(text)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """One JSON object; a key given twice is refused: ``json.loads`` keeps the last one, so
    ``"id": "a", "id": "b"`` would read as b, and the file would not say what is audited."""
    data = dict(pairs)
    if len(data) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f'key "{key}" given twice in one object')
            seen.add(key)
    return data


def _no_constant(name: str) -> Any:
    """``NaN``, ``Infinity`` and ``-Infinity``, which ``json.loads`` accepts, are not JSON."""
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    """A JSON number as a float; one past a float's range (``1e400``) would read as
    Infinity, which no JSON report can hold either."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{clip(text, 40)} is past a float's range")
    return value


def load_rubric(path: Path | None = None) -> Rubric:
    """Load and validate a rubric file, or the embedded default when `path` is None."""
    if path is None:
        text = default_rubric_text()
        where = "embedded default rubric"
    else:
        text = read_rubric_text(path)
        where = str(path)
    try:
        data = loads_untrusted(text, parse_int=_bounded_int, parse_float=_finite_float,
                               parse_constant=_no_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise RubricError(
            f"{where}: not valid JSON (line {exc.lineno}, column {exc.colno})"
        ) from None
    except UnsafeJson as exc:
        raise RubricError(f"{where}: {exc}") from None
    except ValueError as exc:
        raise RubricError(f"{where}: not usable JSON ({exc})") from None
    try:
        return parse_rubric(data)
    except RubricError as exc:
        raise RubricError(f"{where}: {exc}") from None


# --- Routing facts to dimensions -------------------------------------------------------------
# A facet family is routed to every dimension whose own text (id, name, instruction, patterns)
# mentions one of its trigger terms. Dimensions may instead list `evidence_facets` explicitly.
STATE_TERMS = ("typeddict", "basemodel", "reducer", "operator.add", "state model",
               "state definition", "agentstate")
FACET_TRIGGERS: dict[str, tuple[str, ...]] = {
    "git": ("git log", "commit history", "commits", "git narrative"),
    "state": STATE_TERMS,
    # how the graph carries the state (keys dropped, never written, written in parallel
    # without a reducer): graph facts that bear on the state criterion too
    "graph.state": STATE_TERMS,
    "graph": ("stategraph", "add_edge", "fan-out", "fan-in", "parallel branch",
              "run in parallel"),
    "safety": ("os.system", "tempfile", "sandbox", "git clone"),
    "llm": ("with_structured_output", "bind_tools", "structured json", "structured output"),
    "judges": ("persona", "system prompt"),
    "justice": ("chiefjustice", "chief justice", "synthesis engine", "deterministic"),
    "doc.concepts": ("dialectical", "metacognition", "theoretical depth"),
    "claims": ("file path", "cross-reference", "hallucinat", "claims made in the pdf"),
    "vision": ("diagram", "images"),
}
# Which families can bear on a dimension, by the artifact it targets: a report dimension is
# not fed repository facts because its text happens to mention "fan-out".
ARTIFACT_FAMILIES: dict[str, tuple[str, ...]] = {
    "github_repo": ("git", "state", "graph", "graph.state", "safety", "llm", "judges",
                    "justice"),
    "pdf_report": ("doc.concepts", "claims"),
    "pdf_images": ("vision",),
}
# Facts about the inputs themselves go to every dimension that targets the artifact.
ARTIFACT_FACETS: dict[str, tuple[str, ...]] = {
    "github_repo": ("repo.acquire",),
    # hidden text and instructions to the grader: reported on the report's criteria, weighed
    # as nothing (`judging.caps.NO_CREDIT_FACETS`)
    "pdf_report": ("doc.ingest", "doc.hidden_text", "doc.injection"),
    "pdf_images": ("doc.ingest", "vision.extract"),
}


def _dimension_text(dim: Dimension) -> str:
    return " ".join([dim.id.replace("_", " "), dim.name, dim.forensic_instruction]).lower()


def facets_for(dim: Dimension) -> set[str]:
    """The facet families that bear on a dimension."""
    if dim.evidence_facets is not None:
        return set(dim.evidence_facets) | set(ARTIFACT_FACETS[dim.target_artifact])
    text = _dimension_text(dim)
    families = {family for family in ARTIFACT_FAMILIES[dim.target_artifact]
                if any(term in text for term in FACET_TRIGGERS[family])}
    return families | set(ARTIFACT_FACETS[dim.target_artifact])


def route(facet: str, rubric: Rubric) -> list[str]:
    """Ids of the dimensions a finding with this facet bears on, in rubric order.

    A facet matches a family when it equals it or starts with ``family + "."``.
    """
    ids = []
    for dim in rubric.dimensions:
        families = facets_for(dim)
        if any(facet == fam or facet.startswith(fam + ".") for fam in families):
            ids.append(dim.id)
    return ids


_QUOTED = re.compile(r"['\u2018\u201c\"]([^'\u2019\u201d\"]{3,40})['\u2019\u201d\"]")


def concept_terms(rubric: Rubric) -> list[str]:
    """Concept terms the rubric asks the report to explain.

    Taken from each report dimension's explicit `concepts`, else from the quoted short
    title-case phrases in its instruction (e.g. 'Dialectical Synthesis'), never from code.
    """
    terms: list[str] = []
    for dim in rubric.dimensions:
        if dim.target_artifact != "pdf_report" or "doc.concepts" not in facets_for(dim):
            continue
        if dim.concepts is not None:
            found = dim.concepts
        else:
            text = dim.forensic_instruction
            found = [m.group(1).strip() for m in _QUOTED.finditer(text)
                     # "flag ... as 'Keyword Dropping'" names a verdict, not a concept
                     if not text[: m.start()].rstrip().lower().endswith(" as")]
            found = [t for t in found if _looks_like_concept(t)]
        terms.extend(t for t in found if t not in terms)
    return terms


def _looks_like_concept(text: str) -> bool:
    words = text.split()
    if not 1 <= len(words) <= 4 or "/" in text.replace(" / ", "") or "." in text:
        return False
    if words[0].lower() in {"we", "the", "our", "i"}:
        return False
    return all(w[0].isupper() or not w[0].isalpha() for w in words)
