"""The schema a judge model must fill, built per criterion and persona.

`cited_evidence` is an enum of the criterion's evidence ids and every string has a
`max_length`, so constrained decoding (json_schema) can neither invent a citation nor ramble.
Fields the model fills are only the judgement itself; who judged, which criterion, which round
and whether it degraded are set by the bench.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema, create_model

from automaton_auditor.state import Judge, JudicialOpinion

ARGUMENT_MAX = 500
ITEM_MAX = 120
ITEMS_MAX = 3
REMEDIATION_MAX = 240
CITED_MAX = 8
SCHEMA_NAME = "JudicialOpinion"
Score = Literal[1, 2, 3, 4, 5]
BoundedList = list[Annotated[str, Field(max_length=ITEM_MAX)]]


def _cited_type(evidence_ids: Sequence[str]) -> Any:
    if not evidence_ids:
        return list[str]
    ids = list(dict.fromkeys(evidence_ids))
    allowed = frozenset(ids)

    def known(value: str) -> str:
        if value not in allowed:
            raise ValueError(f"{value!r} is not an evidence id of this criterion")
        return value

    # An enum (even of one id; a one-value Literal would become "const"): the only strings
    # the model may cite, enforced by constrained decoding and again on validation.
    return list[Annotated[str, AfterValidator(known),
                          WithJsonSchema({"type": "string", "enum": ids})]]


def opinion_schema(judge: Judge, evidence_ids: Sequence[str]) -> type[BaseModel]:
    """The output model of one judge on one criterion whose evidence has these ids.

    The argument comes before the score so that the model reasons before it rules. The
    Prosecutor lists charges, the Defense mitigations; the Prosecutor and the TechLead say
    what to fix.
    """
    fields: dict[str, Any] = {
        "argument": (str, Field(min_length=1, max_length=ARGUMENT_MAX,
                                description="Your reasoning, citing evidence ids.")),
        "cited_evidence": (_cited_type(evidence_ids), Field(
            max_length=CITED_MAX if evidence_ids else 0,
            description="Ids of the evidence items your argument rests on.")),
    }
    if judge == "Prosecutor":
        fields["charges"] = (BoundedList, Field(max_length=ITEMS_MAX))
    if judge == "Defense":
        fields["mitigations"] = (BoundedList, Field(max_length=ITEMS_MAX))
    if judge in ("Prosecutor", "TechLead"):
        fields["remediation"] = (str, Field(max_length=REMEDIATION_MAX,
                                            description="What to fix, file by file."))
    fields["score"] = (Score, Field(description="1 (failure pattern) to 5 (success pattern)."))
    model: type[BaseModel] = create_model(SCHEMA_NAME, __config__=ConfigDict(extra="forbid"),
                                          **fields)
    return model


def to_opinion(parsed: BaseModel, judge: Judge, criterion_id: str, round_: int,
               usage: dict[str, int] | None) -> JudicialOpinion:
    """The state's `JudicialOpinion` from a validated model answer."""
    data = parsed.model_dump()
    remediation = (data.get("remediation") or "").strip() or None
    return JudicialOpinion(
        judge=judge, criterion_id=criterion_id, score=int(data["score"]),
        argument=data["argument"].strip() or "(no argument)",
        cited_evidence=list(dict.fromkeys(data.get("cited_evidence") or [])),
        charges=[c for c in data.get("charges", []) if c.strip()],
        mitigations=[m for m in data.get("mitigations", []) if m.strip()],
        remediation=remediation, round=round_, usage=usage,
    )
