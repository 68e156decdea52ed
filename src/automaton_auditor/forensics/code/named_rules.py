"""Which named Chief Justice rule a decision is, from what it reads and does (`synthesis`).

One decision is one rule: a fixed cap on the detectives' evidence is the security override;
fact supremacy needs a decision on the evidence that overrules the judges otherwise (sets the
score from something other than a fixed cap, or caps it on a judge's score or opinion).
"""

from __future__ import annotations

from automaton_auditor.forensics.code.spread_routes import Rule

Lines = list[tuple[str, int]]


def judge_weights(rules: list[Rule], weights: Lines) -> Lines:
    """Where one judge's score weighs differently when a criterion's scores are combined:
    judge `weights`, or a branch on a judge or a criterion that sets the score (one that
    only caps it is a cap, not a weight)."""
    branches = [(r.path, r.line) for r in rules
                if r.kind in ("judge", "criterion") and "cap" not in r.does]
    return sorted({*weights, *branches})


def supremacy(rules: list[Rule]) -> Lines:
    """The decisions on the evidence, when one of them overrules the judges otherwise than
    by a fixed cap on the evidence alone (that one is the security override): a cap that
    reads a judge's opinion too (``if defense_hallucinated:``) weighs it against the facts."""
    evidence = [r for r in rules if r.kind == "evidence"]
    overrules = any({"score", "cap"} & set(r.does) and (
        not r.ceiling or {"score", "judge"} & set(r.reads)) for r in evidence)
    return [(r.path, r.line) for r in evidence] if overrules else []
