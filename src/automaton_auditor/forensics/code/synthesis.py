"""Chief Justice findings: where synthesis lives, whether it calls a model, which named
rules its code implements, and how score variance is handled. Identifiers, calls and short
string values count; docstrings and comments do not."""

from __future__ import annotations

import re
from pathlib import Path

from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.source import function_source
from automaton_auditor.state import Finding

RULES = {
    "security_override": re.compile(r"secur", re.I),
    "fact_supremacy": re.compile(r"fact|supremacy|overrul|hallucinat", re.I),
    "functionality_weight": re.compile(r"functional|weight|tech_?lead", re.I),
    "dissent_requirement": re.compile(r"dissent", re.I),
    "variance_re_evaluation": re.compile(r"varian|stdev|spread|re_?evaluat|disagree", re.I),
}
CORE = ("security_override", "fact_supremacy", "functionality_weight")
SYNTH_NAME = re.compile(r"justice|chief|synthes", re.I)
AUX_PATH = re.compile(r"(^|/)(scripts?|examples?|demos?|docs?|notebooks?|bench\w*)/", re.I)


def _scopes(facts: dict[str, JSON]) -> list[tuple[str, str, JSON]]:
    scopes = [(p, q, info) for p in sorted(facts)
              for q, info in sorted((facts[p].get("idents") or {}).items())]
    named = [s for s in scopes if SYNTH_NAME.search(s[1]) or SYNTH_NAME.search(s[0])]
    # Product code first: scripts, examples and demos only back it up.
    return sorted(named, key=lambda s: (bool(AUX_PATH.search(s[0])),
                                        not SYNTH_NAME.search(s[0]), s[0], s[2]["line"]))


def _rules(scopes: list[tuple[str, str, JSON]]) -> dict[str, str]:
    found: dict[str, str] = {}
    for path, qual, info in scopes:
        for rule, pattern in RULES.items():
            if rule in found:
                continue
            hit = next((n for n in info["names"] if pattern.search(n)), None)
            if hit is not None:
                found[rule] = f"{path}:{info['line']} ({qual}: {hit})"
    return found


def _main_scope(scopes: list[tuple[str, str, JSON]]) -> tuple[str, str, JSON] | None:
    named = [s for s in scopes if SYNTH_NAME.search(s[1]) and not AUX_PATH.search(s[0])]
    pool = named or scopes
    if not pool:
        return None
    return max(pool, key=lambda s: (s[2]["end"] - s[2]["line"], -s[2]["line"]))


def justice_findings(facts: dict[str, JSON], repo: Path | None = None) -> list[Finding]:
    """``justice.node``, ``justice.deterministic``, ``justice.rules``, ``justice.variance``."""
    scopes = _scopes(facts)
    main = _main_scope(scopes)
    loc = f"{main[0]}:{main[2]['line']}" if main else "."
    source = function_source(repo, main[0], main[2]["line"], main[2]["end"]) \
        if main and repo is not None else None
    llm = [f"{p}:{line}" for p, _q, info in scopes for line in info["llm"]]
    rules = _rules(scopes)
    core = [r for r in CORE if r in rules]
    listing = "\n".join(f"{p}:{i['line']}-{i['end']} {q}" for p, q, i in scopes[:30]) or None
    rule_text = "\n".join(f"{r}: {where}" for r, where in rules.items()) or None
    return [
        Finding(facet="justice.node", goal="Chief Justice synthesis is implemented in code",
                found=bool(scopes), pattern="success", location=loc,
                content=source or listing,
                rationale=f"{len(scopes)} synthesis function(s) found by name.",
                confidence=0.8, data={"functions": [f"{p}:{q}" for p, q, _ in scopes[:50]]}),
        Finding(facet="justice.deterministic", goal="Synthesis is deterministic Python "
                "(no model call)", found=bool(scopes) and not llm, pattern="success",
                location=llm[0] if llm else loc, content=listing,
                rationale=(f"Model calls inside synthesis code at {', '.join(llm[:5])}." if llm
                           else "No model call inside the synthesis functions." if scopes
                           else "No synthesis code found."),
                confidence=0.75, data={"llm_calls": llm[:50]}),
        Finding(facet="justice.rules", goal="Named conflict-resolution rules (security "
                "override, fact supremacy, functionality weight)", found=len(core) >= 2,
                pattern="success", location=loc, content=rule_text,
                rationale=f"Rules found in code: {', '.join(rules) or 'none'}.",
                confidence=0.7, data={"rules": rules}),
        Finding(facet="justice.variance", goal="Score variance triggers dissent or "
                "re-evaluation", found=any(r in rules for r in ("dissent_requirement",
                                                                "variance_re_evaluation")),
                pattern="success", location=loc, content=rule_text,
                rationale="Variance/dissent handling " + ("found." if any(
                    r in rules for r in ("dissent_requirement", "variance_re_evaluation"))
                    else "not found."), confidence=0.7),
    ]
