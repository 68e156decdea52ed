"""Report descriptions of how the built system behaves, read against the code's facts.

Seven clear cases, each read from a sentence of the report's prose (`forensics.pdf.claims`,
`BEHAVIOURS`; never a future-work section): a model reply said to be retried when it fails or
is malformed ("triggers a “Validation Retry” loop") when no model call is retried
(`llm.retry`), no edge of the compiled graph leads back to an earlier node and no name in the
code speaks of retries or attempts at all; a node said to keep later nodes from running on a
condition ("a gatekeeper that prevents the Judges from firing if the Evidence is malformed")
when the graph has no conditional edge and the code never calls ``add_conditional_edges`` or
builds a ``Command``; the judges' scores said to be weighed ("performs Weighted
Reconciliation") when the synthesis takes their plain mean and weighs no judge differently;
and the clone's temporary directory said to be removed ("purged after auditing") when it is
made with ``mkdtemp`` and no call removes it (`safety.clone_cleanup`); and the judges'
model calls said to be bound with ``with_structured_output``/``bind_tools`` when the judges
send persona prompts and no model call of the code is bound to a schema. A sandboxed clone
and nodes' output merged by a reducer are read against the facts that show them failing
(`forensics.failure_claims`).
A hedged sentence (a plan, an absence, what a rubric asks), a clause about a peer's system,
or code the facts do not cover contradicts nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from automaton_auditor.forensics.code.names import RETRY_NAME
from automaton_auditor.forensics.diagrams.flow import has_cycle, match_score
from automaton_auditor.forensics.failure_claims import (
    CLEANUP_FACT,
    merge_misquote,
    override_misquote,
    quoted_lines,
    sandbox_misquote,
)
from automaton_auditor.forensics.pdf.behaviours import (
    BEHAVIOURS,
    CLEANUP,
    CLEANUP_UNDER_HEADING,
    GATE,
    MERGED,
    OVERRIDE,
    RETRY,
    SANDBOX,
    STATED_BEHAVIOURS,
    STRUCTURED,
    WEIGHED,
)
from automaton_auditor.forensics.usage import Misquote
from automaton_auditor.state import CodeNames, FeatureClaim, Finding, RebuiltGraph

BEHAVIOUR_KINDS = (*BEHAVIOURS, *STATED_BEHAVIOURS)
# Words that make the clause a plan, an absence, a limit or a requirement, not a description;
# never a name's attribute ("operator.add" adds nothing to the plan).
_HEDGE = re.compile(
    r"\b(?<!\.)(?:no|not|never|without|lacks?|lacked|lacking|missing|absent|limited|should|could|"
    r"would|will|must|needs?|plan\w*|todo|future|recommend\w*|suggest\w*|consider\w*|gaps?|"
    r"weakness\w*|requir\w*|expect\w*|ideal\w*|e\.g|example|add|adding|implement|introduce|"
    r"harden\w*|improv\w*|robust)\b|\b(?:the|per|in|by)\s+rubric\b|n't\b", re.IGNORECASE)
# A clause about another team's system ("their judges retry") says nothing of this code,
# unless it also speaks of the author's own ("if a peer's reply is malformed, my agent ...").
# "Peer code" and "peer repositories" are what the author's system audits, not another system.
_OTHERS = re.compile(r"\b(?:peers?(?!['\u2019]?s?\s+(?:code|repo\w*|submissions?|projects?)\b)|"
                     r"their|they)\b", re.IGNORECASE)
_OWN = re.compile(r"\b(?:my|our|we|I)\b")
# Weights of criteria in an overall score are not weights of the judges.
_CRITERIA_WEIGHT = re.compile(r"\b(?:criteri\w*|dimensions?|categor\w*)\s+weights?\b|"
                              r"\bweights?\s+(?:per|of|across)\s+(?:each\s+)?(?:criteri|dimension)",
                              re.IGNORECASE)
MAX_EDGES = 6
_VERB = {"retry_claim": r"\bretr",
         "cleanup_claim": r"\b(?:purg|clean|delet|remov|wip|destroy|discard|torn\s+down)"}


_EXAMPLE_ASIDE = re.compile(r"\((?:e\.g|i\.e|for example)\b[^()]*\)", re.IGNORECASE)


def _clause(sentence: str, match: re.Match[str]) -> str:
    """The part of the sentence between the semicolons (or colons) around the match."""
    start = max(sentence.rfind(";", 0, match.start()), sentence.rfind(":", 0, match.start()))
    ends = [i for i in (sentence.find(";", match.end()), sentence.find(":", match.end()))
            if i >= 0]
    return sentence[start + 1: min(ends, default=len(sentence))]


def described_clause(claim: FeatureClaim) -> str | None:
    """The clause of the sentence that describes the system, or None when it is hedged or
    speaks of another team's system."""
    pattern = {"retry_claim": RETRY, "gate_claim": GATE, "weight_claim": WEIGHED,
               "cleanup_claim": CLEANUP, "structured_claim": STRUCTURED,
               "sandbox_claim": SANDBOX, "merge_claim": MERGED,
               "override_claim": OVERRIDE}[claim.feature]
    match = pattern.search(claim.sentence) or (
        CLEANUP_UNDER_HEADING.search(claim.sentence) if pattern is CLEANUP else None)
    if match is None:
        return None
    # RETRY and CLEANUP match from the sentence's start: the clause is the one with the verb
    verb = _VERB.get(claim.feature)
    spot = re.search(verb, claim.sentence, re.IGNORECASE) if verb else match
    clause = _clause(claim.sentence, spot or match)
    # "(e.g., a Git clone timeout)" gives an example of the condition, it hedges nothing
    if _HEDGE.search(_EXAMPLE_ASIDE.sub(" ", clause)) \
            or (_OTHERS.search(clause) and not _OWN.search(clause)):
        return None
    return clause


def _facts(code: Sequence[Finding]) -> dict[str, Finding]:
    found: dict[str, Finding] = {}
    for fact in code:
        found.setdefault(fact.facet, fact)
    return found


def _edges(graph: RebuiltGraph, code: Sequence[Finding], sentence: str) -> list[str]:
    """The add_edge lines (from `graph.topology`) leaving the nodes the sentence names, or the
    graph's first edges when it names none."""
    words = set(re.findall(r"[A-Za-z][\w-]{3,}", sentence))
    named = {n for n in graph.nodes if any(match_score(w, n) >= 0.8 for w in words)}
    edges = [f"{a} -> {b}" for a, b in graph.edges if not named or a in named]
    topology = _facts(code).get("graph.topology")
    lines = (topology.content or "").splitlines() if topology else []
    quoted = [line for line in lines if "add_edge(" in line
              and any(f'"{a}"' in line and (f'"{b}"' in line or b.upper() in line)
                      for a, b in graph.edges if not named or a in named)]
    return (quoted or [f"{graph.location}: {', '.join(edges)}"])[:MAX_EDGES]


def _retry_named(names: CodeNames) -> bool:
    """Whether the code names a retry in some form (a RetryPolicy on a node, a max_attempts
    setting, tenacity): then a retry may exist that `llm.retry` does not follow. Read from
    the code's own names; every word of the files when those were not read."""
    if names.retry_names is not None:
        return bool(names.retry_names)
    return any(RETRY_NAME.search(n) for n in names.identifiers)


def retry_misquote(claim: FeatureClaim, code: Sequence[Finding], graph: RebuiltGraph | None,
                   names: CodeNames | None) -> Misquote | None:
    """A retry of model replies the code does not have (see the module's docstring)."""
    retry = _facts(code).get("llm.retry")
    if retry is None or retry.found or retry.data.get("selective") or names is None \
            or graph is None or not graph.edges or has_cycle(graph.edges) \
            or _retry_named(names):
        return None
    return Misquote(
        said="a retry of failed or malformed replies",
        rationale="The report says failed or malformed model replies are retried; no model "
                  "call is retried, no edge of the graph leads back to an earlier node, and no "
                  "name in the code speaks of retries or attempts.",
        code=[f"{retry.location if retry.location != '.' else 'code'}: {retry.rationale}",
              f"{graph.location}: no edge leads back ({len(graph.edges)} edges, no loop)"])


def _routes(names: CodeNames) -> bool:
    """Whether some code may route on a condition outside the rebuilt graph's edges: it
    names add_conditional_edges, or uses LangGraph's Command (imported from langgraph; the
    identifiers are every word of the files, so "Command" in a docstring is no route)."""
    return "add_conditional_edges" in names.identifiers or any(
        used.startswith("langgraph") and used.endswith(".Command")
        for uses in names.modules.values() for used in uses)


def gate_misquote(claim: FeatureClaim, code: Sequence[Finding], graph: RebuiltGraph | None,
                  names: CodeNames | None) -> Misquote | None:
    """A conditional gate the graph's edges do not have (see the module's docstring)."""
    if graph is None or not graph.edges or graph.conditional_sources or names is None \
            or _routes(names):
        return None
    return Misquote(
        said="a node that keeps later nodes from running on a condition",
        rationale="The report says a node decides on a condition whether later nodes run; "
                  "the graph has no conditional edge (no add_conditional_edges, no "
                  "Command(goto=...)): every edge always runs.",
        code=[f"{graph.location}: no conditional edge", *_edges(graph, code, claim.sentence)])


def weight_misquote(claim: FeatureClaim, mean: Sequence[str] | None) -> Misquote | None:
    """Weighed judges where the synthesis takes their plain mean (`mean`: the lines that show
    it, from `contradictions.built_features`)."""
    if not mean or _CRITERIA_WEIGHT.search(claim.sentence):
        return None
    return Misquote(
        said="the judges' scores weighed",
        rationale="The report says the synthesis weighs the judges' scores; the code takes "
                  "their plain mean and no judge's score weighs differently.", code=list(mean))


def cleanup_misquote(code: Sequence[Finding]) -> Misquote | None:
    """A clone's temporary directory said to be removed that nothing removes
    (`safety.clone_cleanup`: made by ``mkdtemp``, no call anywhere removes it)."""
    cleanup = _facts(code).get("safety.clone_cleanup")
    if cleanup is None or cleanup.found or not cleanup.data.get("kept") \
            or cleanup.data.get("removed") or cleanup.data.get("through_state"):
        return None  # removed, not determined, or removed on some paths and not others
    return Misquote(
        said="the cloned repository's temporary directory removed after use",
        rationale="The report says the clone's temporary directory is removed; " + (
            "it is a TemporaryDirectory the code keeps in a module-level container (removed "
            "only when something takes it out, or at interpreter exit), so a successful run "
            "leaves it behind." if cleanup.data.get("alive") else
            "it is made with mkdtemp and " + (
                "no call anywhere in the code removes it (no TemporaryDirectory, rmtree or "
                "cleanup of it)." if not cleanup.data.get("partial") else
                "a successful run leaves it behind: the code removes only a path inside it, "
                "or removes it only when something failed.")),
        code=quoted_lines(cleanup)[:MAX_EDGES], data={"fact": CLEANUP_FACT})


def structured_misquote(claim: FeatureClaim, code: Sequence[Finding],
                        names: CodeNames | None) -> Misquote | None:
    """The judges' model calls said to be bound with ``with_structured_output``/``bind_tools``
    when the judges send persona prompts and no model call of the code is bound to a schema
    (`llm.structured_output`), not even in code the graph never runs. A method no file
    names at all is `forensics.usage`'s case (said once, there)."""
    facts = _facts(code)
    bound, personas = facts.get("llm.structured_output"), facts.get("judges.personas")
    method = re.search(r"with_structured_output|bind_tools", claim.sentence, re.IGNORECASE)
    if bound is None or bound.found or bound.data.get("unwired") or personas is None \
            or len(personas.data.get("locations") or {}) < 2 or names is None or \
            method is None or method.group(0).lower() not in names.identifiers:
        return None  # bound, bound in idle code, no judges whose calls could be, or unnamed
    parser = facts.get("llm.schema_parse")
    return Misquote(
        said="the judges' model calls bound to a schema (with_structured_output/bind_tools)",
        rationale="The report says the judges' model calls are bound to a schema with "
                  "with_structured_output or bind_tools; no model call in the code is: the "
                  "judges' replies are " + (
                      f"parsed from their text by an output parser ({parser.location})."
                      if parser is not None and parser.found else
                      "parsed from free text or taken as they come."),
        code=[f"{bound.location if bound.location != '.' else 'code'}: {bound.rationale}",
              *(f"{persona}: model call at {where}" for persona, where
                in sorted((personas.data.get("locations") or {}).items()))][:MAX_EDGES])


def behaviour_misquotes(claim: FeatureClaim, code: Sequence[Finding],
                        graph: RebuiltGraph | None, names: CodeNames | None,
                        mean: Sequence[str] | None) -> list[Misquote]:
    """What a sentence of one of the `BEHAVIOUR_KINDS` says the system does that the code's
    facts show it does not (a retry, a conditional gate, weighed judges, a removed clone, a
    schema binding; a sandboxed clone or a reducer's merge the facts show failing:
    `forensics.failure_claims`); empty when the sentence is hedged or the facts do not
    settle it."""
    clause = described_clause(claim)
    if clause is None:
        return []
    if claim.feature == "retry_claim":
        wrong = retry_misquote(claim, code, graph, names)
    elif claim.feature == "gate_claim":
        wrong = gate_misquote(claim, code, graph, names)
    elif claim.feature == "cleanup_claim":
        wrong = cleanup_misquote(code)
    elif claim.feature == "structured_claim":
        wrong = structured_misquote(claim, code, names)
    elif claim.feature == "sandbox_claim":
        wrong = sandbox_misquote(clause, _facts(code))
    elif claim.feature == "merge_claim":
        wrong = merge_misquote(clause, _facts(code))
    elif claim.feature == "override_claim":
        wrong = override_misquote(clause, _facts(code))
    else:
        wrong = weight_misquote(claim, mean)
    return [wrong] if wrong else []
