"""A report that says the Chief Justice lets the evidence overrule the judges (the sentences
`pdf.libraries.FACT_SUPREMACY` finds), read against the rules the synthesis code applies
(`forensics.code.synthesis`: `justice.rules`).

"The final node resolves conflicts using hardcoded deterministic rules (e.g., "Fact
Supremacy" where forensic data overrules judge interpretation)" describes the synthesis as
built, and so does a rule listed under a lead-in that says so ("Conflicts are resolved by the
ChiefJustice using deterministic rules:" ... "Fact supremacy: Detective evidence overrides
judge opinions."); when the synthesis code is found and none of its rules lets the evidence
overrule the judges (nor tests words, which may be the evidence's), the report states a rule
the code does not have: the code reads no evidence, reads it but no rule lets it change a
score, or lets it only cap a score at a fixed value (the security override). A plan, a gap
or a hedge, in the sentence or its lead-in ("will apply Fact Supremacy", "no fact supremacy
yet", "should let facts overrule opinions") claims nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from automaton_auditor.forensics.pdf.claims import PLAN_WORDS
from automaton_auditor.state import FeatureClaim, Finding

# ... said to be applied now.
_APPLIED = re.compile(r"\b(?:resolves?|appl(?:y|ies|ying)|enforc\w*|uses?|using|implements?|"
                      r"hard-?coded|deterministic\s+rules?)\b", re.IGNORECASE)
# ... of the synthesis ("the Chief Justice", "the final node resolves conflicts").
_SYNTHESIS = re.compile(r"\b(?:chief\s*justice\w*|synthesis|supreme\s+court|final\s+node|"
                        r"resolves?\s+conflicts?|conflict\s+resolution)\b", re.IGNORECASE)
# An instruction ("Apply explicit conflict rules: ...") is a plan.
_IMPERATIVE = re.compile(r"^\W*(?:\d+\W*)?(?:[\w &/-]{1,40}:\s*)?(?:apply|implement|add|use|"
                         r"enforce|introduce)\b", re.IGNORECASE)
_HEDGE = re.compile(rf"\b(?:will|would|should|could|may|might|{PLAN_WORDS}|phases?|gaps?|"
                    r"no|not|never|missing|lack\w*|without|if|rubric|peers?|yet|next|propos\w*|"
                    r"needs?|once|when|goal|intend\w*|design\w*\s+to)\b|n't\b", re.IGNORECASE)


def fact_supremacy_findings(claims: Sequence[FeatureClaim], code: Sequence[Finding]
                            ) -> list[Finding]:
    """A `claims.contradictions` fact for the first sentence that says the synthesis (the
    Chief Justice, the node that resolves conflicts) lets the evidence overrule the judges,
    when the synthesis code is found and no rule of it lets the evidence do so
    (`justice.rules`: no ``fact_supremacy``, and no rule that tests words,
    `justice.keyword_rules`); the rationale says whether the code reads the evidence at all
    (`_evidence_does`)."""
    facts = {f.facet: f for f in code}
    rules, node = facts.get("justice.rules"), facts.get("justice.node")
    named = rules.data.get("rules") if rules is not None else None
    # a rule that tests words may test the evidence's ("any evidence contains 'os.system('",
    # "Defense dropped when it claims metacognition with no PDF evidence"): not read here
    words = facts.get("justice.keyword_rules")
    if node is None or not node.found or not isinstance(named, dict) \
            or "fact_supremacy" in named or (words is not None and words.found):
        return []
    for claim in claims:
        said = claim.sentence
        # a rule listed under a lead-in that names the synthesis ("Conflicts are resolved by
        # the ChiefJustice using deterministic rules:" ... "Fact supremacy: Detective
        # evidence overrides judge opinions.") is said of it: the lead-in is read with the
        # sentence (and hedges it too) when the sentence alone does not name the synthesis
        told = said if _APPLIED.search(said) and _SYNTHESIS.search(said) \
            else f"{claim.lead} {said}"
        if claim.feature != "fact_supremacy" or _HEDGE.search(told) \
                or _IMPERATIVE.search(said) or (told != said and _IMPERATIVE.search(claim.lead)) \
                or not (_APPLIED.search(told) and _SYNTHESIS.search(told)):
            continue
        where = f"report p.{claim.page}" if claim.page else "report"
        applied = ", ".join(sorted(named)) or "none"
        reads = [str(r) for r in (rules.data.get("evidence") or [])] if rules else []
        code_lines = [f"{node.location}: {node.rationale}",
                      f"{rules.location if rules else ''}: rules the code applies: {applied}",
                      *([f"decisions that read the evidence: {', '.join(reads)}"]
                        if reads else [])]
        return [Finding(
            facet="claims.contradictions", goal="The report says the synthesis applies a rule "
            "the code does not have", found=True, pattern="failure", location=where,
            confidence=0.8, content=f"{where}: {claim.sentence}\n" + "\n".join(code_lines),
            rationale="The report says the Chief Justice lets the evidence overrule the judges "
                      f"(fact supremacy); {_evidence_does(reads, named)} "
                      f"(rules it applies: {applied}).",
            data={"kind": "fact_supremacy", "code": code_lines})]
    return []


def _evidence_does(reads: list[str], named: dict[str, list[str]]) -> str:
    """What the synthesis does with the evidence, as `justice.rules` tells it (`reads`: the
    decisions that read it; `named`: the rules credited). Without fact supremacy a rule on
    the evidence that changes a score can only be a fixed cap (`named_rules.supremacy`)."""
    if not reads:
        return "no rule of the synthesis code reads the evidence"
    caps = [line for line in named.get("security_override") or [] if line in reads]
    if caps:
        return (f"the evidence only caps a score at a fixed value (security override, "
                f"{caps[0]}); no rule lets it overrule the judges otherwise")
    # it reads the evidence (for text, or in a rule that never fires or whose result is
    # dropped), but what it finds there never reaches a score
    return (f"the synthesis code reads the evidence ({reads[0]}), but no rule lets the "
            "evidence change a score")
