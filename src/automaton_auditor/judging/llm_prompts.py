"""Judge prompts, built from the files in `prompts/` and the rubric.

The system message is the persona (its philosophy); the user message is the criterion
template filled from the rubric and the dossier. Evidence is quoted as JSON lines between two
markers whose boundary is derived from the evidence itself, so the quoted (hostile) text can
neither close the block nor pass for instructions: JSON escapes its newlines.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from functools import cache
from importlib import resources
from string import Template
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from automaton_auditor.judging.caps import no_credit
from automaton_auditor.rubric import Dimension
from automaton_auditor.state import Evidence, Judge, JudicialOpinion
from automaton_auditor.text import clip

PERSONA_FILES: dict[str, str] = {"Prosecutor": "prosecutor.md", "Defense": "defense.md",
                                 "TechLead": "tech_lead.md"}
CONTENT_IN_PROMPT = 300  # characters of each evidence snippet the judges read
MAX_EVIDENCE_IN_PROMPT = 30  # strongest items first; only these ids can be cited


@cache
def prompt_text(name: str) -> str:
    """The text of one file in `prompts/`."""
    files = resources.files("automaton_auditor").joinpath("prompts", name)
    return files.read_text(encoding="utf-8")


def persona_prompt(judge: Judge) -> str:
    """The system prompt of a persona."""
    return prompt_text(PERSONA_FILES[judge]).strip()


def prompt_evidence(dossier: Sequence[Evidence]) -> list[Evidence]:
    """The evidence a judge reads: the strongest items, in a stable order."""
    ranked = sorted(dossier, key=lambda e: (-e.confidence, e.evidence_id))
    return ranked[:MAX_EVIDENCE_IN_PROMPT]


def _signal(e: Evidence) -> str:
    if no_credit(e):  # text written at the judges: shown as a fact, weighed as nothing
        return "no weight (text aimed at the judges)"
    if e.limitation is not None:  # the auditor could not look: no fact about the work
        return f"not established (auditor limitation: {e.limitation})"
    if e.supports_success:
        return "supports success"
    if e.supports_failure:
        return "supports failure"
    return "context"


def evidence_line(e: Evidence) -> str:
    """One evidence item as a single JSON line."""
    content = clip(e.content or "", CONTENT_IN_PROMPT)
    item: dict[str, Any] = {"id": e.evidence_id, "location": e.location, "signal": _signal(e),
                            "goal": e.goal, "found": e.found, "confidence": e.confidence,
                            "rationale": e.rationale}
    if e.security:
        item["security"] = True
    if content:
        item["content"] = content
    return json.dumps(item, ensure_ascii=False)


def boundary(text: str) -> str:
    """A marker suffix derived from the quoted text (unguessable when the text is written)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _judicial_logic(dimension: Dimension, judge: Judge) -> str:
    guidance = dimension.judicial_logic.for_judge(judge) if dimension.judicial_logic else None
    if not guidance:
        return ""
    return f"\n## Guidance for your role on this criterion\n{guidance}\n"


def criterion_prompt(judge: Judge, dimension: Dimension, evidence: Sequence[Evidence]) -> str:
    """The criterion template filled for one judge."""
    lines = "\n".join(evidence_line(e) for e in evidence) or "(no evidence was collected)"
    return Template(prompt_text("criterion.md")).substitute(
        criterion_name=dimension.name, criterion_id=dimension.id,
        target_artifact=dimension.target_artifact,
        forensic_instruction=dimension.forensic_instruction,
        success_pattern=dimension.success_pattern or "(not given)",
        failure_pattern=dimension.failure_pattern or "(not given)",
        judicial_logic=_judicial_logic(dimension, judge),
        boundary=boundary(lines), evidence=lines,
    )


def reevaluation_prompt(own: JudicialOpinion, peers: Sequence[JudicialOpinion]) -> str:
    """The re-evaluation addendum: the other judges' arguments and citations, as data."""
    lines = "\n".join(json.dumps({"judge": p.judge, "score": p.score, "argument": p.argument,
                                  "cited_evidence": p.cited_evidence}, ensure_ascii=False)
                      for p in peers)
    return Template(prompt_text("reevaluation.md")).substitute(
        own_score=own.score, boundary=boundary(lines), peers=lines)


def build_messages(judge: Judge, dimension: Dimension, evidence: Sequence[Evidence],
                   own: JudicialOpinion | None = None,
                   peers: Sequence[JudicialOpinion] = ()) -> list[BaseMessage]:
    """System (persona) and user (criterion, evidence, and round 2's peers) messages."""
    text = criterion_prompt(judge, dimension, evidence)
    if own is not None:
        text = text.rstrip() + "\n" + reevaluation_prompt(own, peers)
    return [SystemMessage(persona_prompt(judge)), HumanMessage(text)]
