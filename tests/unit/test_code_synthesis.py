"""Chief Justice facts read from what the synthesis code computes, never from names."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings

from .test_code_ast_graph import write_repo

GRAPH = '''
from langgraph.graph import StateGraph, START, END
from nodes.justice import chief_justice_node


def build(State):
    g = StateGraph(State)
    g.add_node("chief_justice", chief_justice_node)
    g.add_edge(START, "chief_justice")
    g.add_edge("chief_justice", END)
    return g.compile()
'''


def _justice(tmp_path: Path, code: str, extra: dict[str, str] | None = None):
    files = write_repo(tmp_path, {"graph.py": GRAPH, "nodes/justice.py": code,
                                  **(extra or {})})
    findings, _ = code_findings(tmp_path, files)
    return {f.facet: f for f in findings if f.facet.startswith("justice.")}


def test_a_function_named_like_a_rule_that_only_averages_earns_nothing(tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
RULES = ["security_override", "fact_supremacy", "functionality_weight"]


def security_override(opinions):
    """Security override: caps the score at 3 when security is violated."""
    return sum(o.score for o in opinions) / len(opinions)


def variance_re_evaluation(opinions):
    return "variance_re_evaluation"


def chief_justice_node(state):
    score = security_override(state["opinions"])
    note = variance_re_evaluation(state["opinions"])
    return {"final_score": round(score), "note": note}
''')
    assert facts["justice.rules"].found is False
    assert facts["justice.rules"].data["rules"] == {}
    averaging = facts["justice.averaging"]
    assert averaging.found and averaging.pattern == "failure" and averaging.confidence >= 0.8
    assert "nodes/justice.py:7: return sum(o.score for o in opinions) / len(opinions)" in (
        averaging.content or "")
    assert facts["justice.variance"].found is False


def test_a_cap_on_a_keyword_in_the_argument_is_a_keyword_rule(tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def chief_justice_node(state):
    ops = state["opinions"]
    avg = sum(o.score for o in ops) / len(ops)
    for op in ops:
        text = op.argument.lower()
        if op.judge == "Prosecutor" and "os.system" in text:
            avg = min(3, avg)
    spread = max(o.score for o in ops) - min(o.score for o in ops)
    dissent = None
    if spread > 2:
        dissent = f"Judges disagree by {spread}"
    return {"final_score": round(avg), "dissent": dissent}
''')
    keyword = facts["justice.keyword_rules"]
    assert keyword.found and keyword.location == "nodes/justice.py:7"
    assert facts["justice.averaging"].found  # a keyword cap does not resolve a conflict
    variance = facts["justice.variance"]
    assert variance.found is False and "only adds dissent text" in variance.rationale
    assert facts["justice.rules"].data["rules"] == {
        "dissent_requirement": ["nodes/justice.py:11"]}


def test_rules_on_evidence_spread_and_weights_through_helpers(tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
WEIGHTS = {"Prosecutor": 1.0, "Defense": 1.0, "TechLead": 2.0}


def _violation(evidences):
    for ev in evidences:
        if not ev.found:
            return True
    return False


def _weighted(ops):
    total = sum(WEIGHTS[o.judge] * o.score for o in ops)
    return total / sum(WEIGHTS[o.judge] for o in ops)


def chief_justice_node(state):
    ops, evidences = state["opinions"], state["evidences"]
    final = _weighted(ops)
    if _violation(evidences):
        final = min(final, 3)
    scores = [o.score for o in ops]
    needs_review = max(scores) - min(scores) > 2
    return {"final_score": round(final), "re_evaluate": needs_review}
''')
    rules = facts["justice.rules"]
    assert rules.found
    # the fixed cap on the evidence is one decision: the security override, not fact supremacy
    assert rules.data["rules"] == {
        "security_override": ["nodes/justice.py:20"],
        "functionality_weight": ["nodes/justice.py:14"],
        "variance_re_evaluation": ["nodes/justice.py:23"]}
    assert "nodes/justice.py:23: needs_review = max(scores) - min(scores) > 2" in (
        facts["justice.variance"].content or "")
    assert facts["justice.averaging"].found is False
    assert facts["justice.keyword_rules"].found is False
    assert facts["justice.node"].data["functions"] == [
        "nodes/justice.py:chief_justice_node", "nodes/justice.py:_weighted",
        "nodes/justice.py:_violation"]


def test_a_rule_on_a_judge_name_no_judge_carries_never_fires(tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def chief_justice_node(state):
    ops = state["opinions"]
    final = sum(o.score for o in ops) / len(ops)
    for op in ops:
        if op.judge == "Prosecution" and op.score == 1:
            final = min(final, 3)
    return {"final_score": round(final)}
''', {"nodes/judges.py": '''
from state import JudicialOpinion


def prosecutor(state):
    return {"opinions": [JudicialOpinion(judge="Prosecutor", score=2, argument="x")]}


def defense(state):
    return {"opinions": [JudicialOpinion(judge="Defense", score=4, argument="y")]}
'''})
    averaging = facts["justice.averaging"]
    assert averaging.found and averaging.data["dead_rules"] == 1
    assert "nodes/justice.py:6: if op.judge == \"Prosecution\"" in (averaging.content or "")


def test_scores_taken_from_a_model_answer(tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
from langchain_openai import ChatOpenAI
from state import Verdict


def chief_justice_node(state):
    llm = ChatOpenAI(model="gpt-4o").with_structured_output(Verdict)
    report = llm.invoke(str(state["opinions"]))
    final_scores = report.scores
    return {"final_scores": final_scores}
''')
    verdict = facts["justice.model_verdict"]
    assert verdict.found and verdict.location == "nodes/justice.py:8"
    assert facts["justice.deterministic"].found is False


MODELS = '''
from pydantic import BaseModel


class CriterionResult(BaseModel):
    dimension_id: str
    final_score: int


class AuditReport(BaseModel):
    executive_summary: str
    overall_score: float
    criteria: list[CriterionResult]
'''

# yohans-kasaw/CodeDueProcess's shape: the model writes the summary, the code its scores
REPLACED = '''
from langchain_openai import ChatOpenAI
from models import AuditReport, CriterionResult


def chief_justice_node(state):
    results = [CriterionResult(dimension_id=k, final_score=min(v)) for k, v in
               state["scores"].items()]
    overall = sum(r.final_score for r in results) / len(results)
    chain = ChatOpenAI(model="gpt-4o").with_structured_output(AuditReport)
    report = AuditReport.model_validate(chain.invoke("summarise"))
    report.criteria = results
    SECOND
    return {"final_report": report}
'''


def test_a_copy_of_the_judges_scores_for_the_dissent_text_changes_no_score(
        tmp_path: Path) -> None:
    # yohans-kasaw/CodeDueProcess's shape: the spread branch only tabulates the scores
    code = '''
def chief_justice_node(state):
    ops = state["opinions"]
    final_score = round(sum(o.score for o in ops) / len(ops))
    dissent = None
    if max(o.score for o in ops) - min(o.score for o in ops) > 2:
        TABLE
        dissent = f"Prosecutor: {scores_by_judge.get('Prosecutor')}"
    return {"final_score": final_score, "dissent": dissent}
'''
    copied = _justice(tmp_path / "copy", code.replace(
        "TABLE", "scores_by_judge = {op.judge: op.score for op in ops}"))
    assert copied["justice.variance"].found is False
    assert "only adds dissent text" in copied["justice.variance"].rationale
    # a filtered copy is a new set of scores, but one only the dissent text reads changes no
    # score either; made the verdict, it re-evaluates
    table = "scores_by_judge = {o.judge: o.score for o in ops if o.score > 1}"
    assert not _justice(tmp_path / "filtered", code.replace("TABLE", table))[
        "justice.variance"].found
    verdict = table + "\n        final_score = min(scores_by_judge.values())"
    assert _justice(tmp_path / "kept", code.replace("TABLE", verdict))["justice.variance"].found
    # a cap written in the branch (``min(score, 3)``) is a cap wherever its value goes
    capped = "scores_by_judge = {o.judge: min(o.score, 3) for o in ops}"
    assert _justice(tmp_path / "capped", code.replace("TABLE", capped))[
        "justice.variance"].found


def test_a_model_answer_whose_scores_the_code_assigns_again_is_no_verdict(
        tmp_path: Path) -> None:
    both = REPLACED.replace("SECOND", "report.overall_score = overall")
    facts = _justice(tmp_path / "both", both, {"models.py": MODELS})
    assert facts["justice.model_verdict"].found is False
    assert facts["justice.deterministic"].found
    # the model's overall score is kept: it still decides a score
    one = REPLACED.replace("SECOND", "report.executive_summary += '.'")
    facts = _justice(tmp_path / "one", one, {"models.py": MODELS})
    assert facts["justice.model_verdict"].found
    assert facts["justice.model_verdict"].location == "nodes/justice.py:11"


def test_criterion_weights_on_the_overall_are_no_functionality_weight(tmp_path: Path) -> None:
    # the judges' mean with a small Prosecutor penalty, caps on evidence, and weights keyed by
    # criterion that only combine the criteria into an overall score
    facts = _justice(tmp_path, '''
def _final(ops):
    scores = [o.score for o in ops]
    base = round(sum(scores) / len(scores))
    judges = {o.judge: o for o in ops}
    prosecutor = judges.get("Prosecutor")
    if prosecutor and prosecutor.score <= 2:
        base = max(1, base - 1)
    return base


def _overall(results, weights):
    usable = [(r.final_score, weights.get(r.criterion_id, 0.0)) for r in results]
    weighted_sum = sum(s * w for s, w in usable)
    return round(weighted_sum / sum(w for _, w in usable))


def chief_justice_node(state):
    results = []
    for criterion_id, ops in state["opinions"].items():
        final = _final(ops)
        if any(not ev.found for ev in state["evidences"]):
            final = min(final, 2)
        results.append(Result(criterion_id=criterion_id, final_score=final))
    overall = _overall(results, state["weights"])
    if any(ev.found and ev.security for ev in state["evidences"]):
        overall = min(overall, 3)
    return {"results": results, "overall_score": overall}
''')
    rules = facts["justice.rules"].data["rules"]
    assert "functionality_weight" not in rules
    assert facts["justice.averaging"].found is False  # the evidence caps change the mean
    unweighted = facts["justice.unweighted_mean"]
    assert unweighted.found and unweighted.pattern == "failure"
    assert (unweighted.content or "").splitlines() == [
        "nodes/justice.py:4: base = round(sum(scores) / len(scores))"]


def test_judge_weights_combining_one_criterion_are_a_functionality_weight(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def chief_justice_node(state):
    results = {}
    for criterion_id, ops in state["opinions"].items():
        weights = {"TechLead": 2.0, "Prosecutor": 1.0, "Defense": 1.0}
        total = sum(weights[o.judge] * o.score for o in ops)
        final = total / sum(weights[o.judge] for o in ops)
        if any(not ev.found for ev in state["evidences"]):
            final = min(final, 2)
        for op in ops:
            if op.judge == "Prosecutor" and op.charges:
                final = min(final, 3)
        results[criterion_id] = round(final)
    return {"final_scores": results}
''')
    rules = facts["justice.rules"].data["rules"]
    # the Prosecutor's cap is a cap, not a weight
    assert sorted(rules["functionality_weight"]) == ["nodes/justice.py:5",
                                                     "nodes/justice.py:7"]
    assert facts["justice.unweighted_mean"].found is False


def test_a_weight_set_for_one_judge_on_one_criterion_is_a_functionality_weight(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def chief_justice_node(state):
    results = {}
    for criterion_id, ops in state["opinions"].items():
        total = count = 0.0
        for op in ops:
            weight = 1.0
            if op.judge == "TechLead" and criterion_id == "graph_orchestration":
                weight = 2.0
            total += weight * op.score
            count += weight
        results[criterion_id] = round(total / count)
    return {"final_scores": results}
''')
    assert facts["justice.rules"].data["rules"]["functionality_weight"] == [
        "nodes/justice.py:8", "nodes/justice.py:12"]
    assert facts["justice.unweighted_mean"].found is False



def test_a_judge_s_score_adopted_for_a_set_of_criteria_is_a_functionality_weight(
        tmp_path: Path) -> None:
    """zumi123/automaton_auditor2: ``if dimension_id in ("graph_orchestration", ...)`` the
    Tech Lead's score is the verdict. A membership test names the criteria as an equality
    test does."""
    code = '''
def _get_judge_opinion(opinions, judge):
    for o in opinions:
        if getattr(o, "judge", None) == judge:
            return o
    return None


def resolve(opinions, dimension_id):
    tech_lead = _get_judge_opinion(opinions, "TechLead")
    t_score = tech_lead.score if tech_lead else 3
    final = round(sum(o.score for o in opinions) / len(opinions))
    if dimension_id in ("graph_orchestration", "state_management_rigor"):
        final = t_score
    return final


def chief_justice_node(state):
    return {"final_scores": {c: resolve(ops, c) for c, ops in state["opinions"].items()}}
'''
    facts = _justice(tmp_path, code)
    assert facts["justice.rules"].data["rules"].get("functionality_weight") == [
        "nodes/justice.py:13"], facts["justice.rules"].rationale
    equal = code.replace('dimension_id in ("graph_orchestration", "state_management_rigor")',
                         'dimension_id == "graph_orchestration"')
    assert _justice(tmp_path / "equal", equal)["justice.rules"].data["rules"].get(
        "functionality_weight") == ["nodes/justice.py:13"]


def test_a_judge_weighed_more_only_on_a_wide_spread_leaves_the_mean_plain(
        tmp_path: Path) -> None:
    """Miked1991: when the scores are 3 or more apart the Tech Lead's score is adopted on
    architecture criteria; otherwise the verdict is the judges' plain mean. The weight is a
    functionality weight, and where no rule fires the mean is still plain. Outside the spread
    test the same weight applies to every verdict on those criteria."""
    code = '''
def resolve(opinions, criterion_id):
    scores = {o.judge: o.score for o in opinions}
    techlead_score = scores.get("TechLead", 3)
    final_score = round(sum(scores.values()) / len(scores))
    if max(scores.values()) - min(scores.values()) >= 3:
        if criterion_id in ["forensic_accuracy_code", "langgraph_architecture"]:
            final_score = techlead_score
    return final_score


def chief_justice_node(state):
    return {"final_scores": {c: resolve(ops, c) for c, ops in state["opinions"].items()}}
'''
    facts = _justice(tmp_path, code)
    assert "nodes/justice.py:7" in facts["justice.rules"].data["rules"][
        "functionality_weight"], facts["justice.rules"].rationale
    plain = facts["justice.unweighted_mean"]
    assert plain.found and "except when the scores are far apart (nodes/justice.py:7" in (
        plain.rationale)
    always = code.replace("    if max(scores.values()) - min(scores.values()) >= 3:\n"
                          "        if criterion_id", "    if criterion_id").replace(
        "            final_score = techlead_score", "        final_score = techlead_score")
    assert not _justice(tmp_path / "always", always)["justice.unweighted_mean"].found

SPREAD_LABEL = '''
def _dissent(ops):
    scores = [o.score for o in ops]
    if max(scores) - min(scores) <= 2:
        return None
    return f"Contested Verdict: scores {scores}"


def chief_justice_node(state):
    ops = state["opinions"]
    final = sum(o.score for o in ops) / len(ops)
    if any(not ev.found for ev in state["evidences"]):
        final = min(final, 2)
    dissent = _dissent(ops)
    contested = dissent is not None
    payload = []
    payload.append({"final": final, "contested": contested, "dissent": dissent})
RE_SCORE
    report = f"Final: {final} Contested: {'Yes' if contested else 'No'}"
    return {"final_score": round(final), "report": report, "payload": payload}
'''


def test_a_spread_flag_that_only_labels_the_ruling_is_no_re_evaluation(
        tmp_path: Path) -> None:
    """``contested = dissent is not None`` read only to pick 'Yes'/'No' and handed to a
    payload list decides nothing: the spread only adds dissent text."""
    facts = _justice(tmp_path, SPREAD_LABEL.replace("RE_SCORE\n", ""))
    variance = facts["justice.variance"]
    assert variance.found is False and "only adds dissent text" in variance.rationale
    assert "nodes/justice.py:4: if max(scores) - min(scores) <= 2:" in (variance.content or "")
    assert "variance_re_evaluation" not in facts["justice.rules"].data["rules"]


def test_a_spread_flag_tested_to_re_score_is_a_re_evaluation(tmp_path: Path) -> None:
    facts = _justice(tmp_path, SPREAD_LABEL.replace("RE_SCORE", '''    if contested:
        final = (final + sum(1 for ev in state["evidences"] if ev.found)) / 2'''))
    variance = facts["justice.variance"]
    assert variance.found and "nodes/justice.py:18" in variance.data["lines"]


def test_a_keyword_search_in_the_argument_and_its_citations_is_a_keyword_rule(
        tmp_path: Path) -> None:
    """The Prosecutor's citations are words it wrote: searching a keyword in a text that
    joins its argument and its citations is no security fact."""
    facts = _justice(tmp_path, '''
KEYWORDS = ("security", "os.system", "shell=true")


def _cap(records, score):
    prosecutor = next((r for r in records if r.judge == "Prosecutor"), None)
    blob = " ".join([prosecutor.argument, *prosecutor.cited_evidence]).lower()
    if any(keyword in blob for keyword in KEYWORDS):
        return min(score, 3.0)
    return score


def chief_justice_node(state):
    ops = state["opinions"]
    return {"final_score": round(_cap(ops, sum(o.score for o in ops) / len(ops)))}
''')
    keyword = facts["justice.keyword_rules"]
    assert keyword.found and keyword.location == "nodes/justice.py:8"
    assert "security_override" not in facts["justice.rules"].data["rules"]
    assert "fact_supremacy" not in facts["justice.rules"].data["rules"]


def test_a_keyword_search_in_the_detectives_evidence_is_an_evidence_rule(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
def chief_justice_node(state):
    ops = state["opinions"]
    final = sum(o.score for o in ops) / len(ops)
    if any("os.system" in ev.content for ev in state["evidences"]):
        final = min(final, 3)
    return {"final_score": round(final)}
''')
    assert facts["justice.keyword_rules"].found is False
    assert facts["justice.rules"].data["rules"]["security_override"] == [
        "nodes/justice.py:5"]


def test_a_criterion_branch_that_only_decides_on_a_keyword_is_a_keyword_rule(
        tmp_path: Path) -> None:
    # the criterion test alone decides nothing: the score is set only when the Tech Lead's
    # argument holds a word, so this is no functionality weight, and the rest is a mean
    facts = _justice(tmp_path, '''
from statistics import mean


def rule(criterion_id, opinions):
    if criterion_id == "graph_orchestration":
        for op in opinions:
            if op.judge == "TechLead" and "modular" in op.argument.lower():
                return op.score
    return round(mean([op.score for op in opinions]))


def chief_justice_node(state):
    return {"final_score": rule(state["criterion"], state["opinions"])}
''')
    assert "functionality_weight" not in facts["justice.rules"].data["rules"]
    assert facts["justice.keyword_rules"].data["lines"] == [
        "nodes/justice.py:6", "nodes/justice.py:8"]
    assert facts["justice.averaging"].found is True


def test_a_criterion_branch_that_sets_the_judges_score_is_still_a_weight(
        tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
from statistics import mean


def rule(criterion_id, opinions):
    if criterion_id == "graph_orchestration":
        for op in opinions:
            if op.judge == "TechLead":
                return op.score
    return round(mean([op.score for op in opinions]))


def chief_justice_node(state):
    return {"final_score": rule(state["criterion"], state["opinions"])}
''')
    assert facts["justice.rules"].data["rules"]["functionality_weight"] == [
        "nodes/justice.py:6", "nodes/justice.py:8"]


STATE_GRAPH = '''
from typing import List
from pydantic import BaseModel
from langgraph.graph import StateGraph, START, END
from nodes.justice import chief_justice_node


class AgentState(BaseModel):
    opinions: List[dict] = []
    final_score: int = 0{extra}


g = StateGraph(AgentState)
g.add_node("chief_justice", chief_justice_node)
g.add_edge(START, "chief_justice")
g.add_edge("chief_justice", END)
graph = g.compile()
'''

GATED = '''
def resolve(ops, rules):
    if rules.get("security_override") and min(o.score for o in ops) == 1:
        return 3
    return sum(o.score for o in ops) / len(ops)


def chief_justice_node(state):
    rules = getattr(state, "synthesis_rules", {})
    return {"final_score": round(resolve(state.opinions, rules))}
'''


def test_a_rule_gated_on_a_state_key_the_schema_lacks_never_fires(tmp_path: Path) -> None:
    facts = _justice(tmp_path / "a", GATED, {"graph.py": STATE_GRAPH.format(extra="")})
    averaging = facts["justice.averaging"]
    assert averaging.found and averaging.data["dead_rules"] == 1
    assert "nodes/justice.py:3: if rules.get(\"security_override\")" in (
        averaging.content or "")
    assert facts["justice.rules"].data["rules"] == {}
    # the same rule on a key the state declares can fire: it changes the mean
    declared = STATE_GRAPH.format(extra="\n    synthesis_rules: dict = {}")
    live = _justice(tmp_path / "b", GATED, {"graph.py": declared})
    assert live["justice.averaging"].found is False
    assert live["justice.rules"].data["rules"]["security_override"] == ["nodes/justice.py:3"]


def test_a_helpers_first_parameter_is_not_the_state(tmp_path: Path) -> None:
    helper = '''
def resolve(config, ops):
    rules = getattr(config, "synthesis_rules", {})
    if rules.get("security_override") and min(o.score for o in ops) == 1:
        return 3
    return sum(o.score for o in ops) / len(ops)


def chief_justice_node(state):
    return {"final_score": round(resolve(state.config, state.opinions))}
'''
    graph = STATE_GRAPH.format(extra="\n    config: dict = {}")
    facts = _justice(tmp_path, helper, {"graph.py": graph})
    assert facts["justice.averaging"].found is False


def test_a_score_filled_from_the_evidence_alone_rules_on_no_conflict(tmp_path: Path) -> None:
    """A branch on the evidence that sets a score no judge's score ever reaches (a criterion
    of the detectives' own) leaves every judged criterion at the judges' mean; one that
    replaces the judges' combined score with the evidence's is a rule on them."""
    code = '''
def chief_justice_node(state):
    results = []
    for criterion, ops in state["opinions_by_criterion"].items():
        final_score = sum(o.score for o in ops) / len(ops)
{override}
        results.append({{"criterion": criterion, "final_score": round(final_score)}})
    collab_evidence = state["evidences"].get("collaboration", {{}})
    if collab_evidence:
        collab_score = collab_evidence.get("collaboration_score", 1)
        results.append({{"criterion": "collaboration", "final_score": collab_score}})
    return {{"results": results}}
'''
    facts = _justice(tmp_path, code.format(override=""))
    averaging = facts["justice.averaging"]
    assert averaging.found, averaging.rationale
    assert facts["justice.rules"].data["rules"] == {}
    facts = _justice(tmp_path, code.format(override='''\
        if not state["evidences"].get(criterion):
            final_score = state["evidences"].get("floor", 1)'''))
    assert facts["justice.averaging"].found is False
    assert facts["justice.rules"].data["rules"]["fact_supremacy"] == ["nodes/justice.py:6"]


UNPACKING_JUSTICE = '''
def resolve(p, d, t):
    scores = [p, d, t]
    if max(scores) - min(scores) > 2:
        return sorted(scores)[1]
    return round(sum(scores) / 3)


def is_security_flaw(opinions):
    words = ["security", "vulnerability", "os.system"]
    for op in opinions:
        for word in words:
            if word.lower() in op.argument.lower() and op.score <= 2:
                return True
    return False


def make_chief(llm=None):
    def chief(state):
        ops = state["opinions"]
        p = d = t = 3
        for op in ops:
            if op.judge == "Prosecutor":
                p = op.score
            elif op.judge == "Defense":
                d = op.score
            elif op.judge == "TechLead":
                t = op.score
        final_score = resolve(p, d, t)
        if is_security_flaw(ops):
            if final_score > 3:
                final_score = 3
        return {"final_score": final_score}
    return chief
'''


def test_naming_each_judge_s_score_weighs_no_judge_and_a_normalised_keyword_is_words(
        tmp_path: Path) -> None:
    # the node is a factory's closure; it names each judge's score by identity (bookkeeping,
    # the three are then combined alike), and caps on a security word a judge wrote, matched
    # through ``word.lower()`` over a local list of literals
    graph = GRAPH.replace("from nodes.justice import chief_justice_node",
                          "from nodes.justice import make_chief").replace(
        'g.add_node("chief_justice", chief_justice_node)',
        'g.add_node("chief_justice", make_chief(None))')
    facts = _justice(tmp_path, UNPACKING_JUSTICE, {"graph.py": graph})
    assert facts["justice.node"].rationale.startswith("Synthesis starts at make_chief.chief")
    assert "functionality_weight" not in facts["justice.rules"].data["rules"]
    keyword = facts["justice.keyword_rules"]
    assert keyword.found and "nodes/justice.py:13: if word.lower() in op.argument" in (
        keyword.content or "")
    assert facts["justice.unweighted_mean"].found
    # the named scores combined with the Tech Lead's counted twice: a weight
    weighted = UNPACKING_JUSTICE.replace("final_score = resolve(p, d, t)",
                                         "final_score = round((p + d + 2 * t) / 4)")
    facts = _justice(tmp_path / "w", weighted, {"graph.py": graph})
    assert not facts["justice.unweighted_mean"].found


DETECTIVES_ONLY = '''
from langgraph.graph import StateGraph, START, END
from nodes.detectives import repo_investigator


def build(State):
    g = StateGraph(State)
    g.add_node("repo_investigator", repo_investigator)
    g.add_edge(START, "repo_investigator")
    g.add_edge("repo_investigator", END)
    return g.compile()
'''
LOADER = '''
import json


class RubricLoader:
    def __init__(self, path):
        self.data = json.load(open(path))

    def get_synthesis_rules(self):
        """Get synthesis rules for Chief Justice (for final)"""
        return self.data.get("synthesis_rules", {})
'''


def test_a_function_named_like_synthesis_that_the_graph_never_runs_is_no_synthesis(
        tmp_path: Path) -> None:
    files = write_repo(tmp_path, {
        "graph.py": DETECTIVES_ONLY, "rubric_loader.py": LOADER,
        "nodes/detectives.py": "def repo_investigator(state):\n    return {}\n"})
    findings, _ = code_findings(tmp_path, files)
    facts = {f.facet: f for f in findings if f.facet.startswith("justice.")}
    assert not facts["justice.node"].found
    assert facts["justice.node"].rationale == "No synthesis function found."
    assert not facts["justice.deterministic"].found
    # a synthesis function a node the graph runs calls is read as the synthesis code
    files = write_repo(tmp_path / "called", {
        "graph.py": DETECTIVES_ONLY,
        "synthesis.py": "def synthesize(scores):\n    return min(scores)\n",
        "nodes/detectives.py": "from synthesis import synthesize\n\n\n"
                               "def repo_investigator(state):\n"
                               "    return {'score': synthesize([1, 2])}\n"})
    findings, _ = code_findings(tmp_path / "called", files)
    assert {f.facet: f for f in findings}["justice.node"].found


def test_a_synthesis_node_that_only_returns_the_state_is_a_stub(tmp_path: Path) -> None:
    facts = _justice(tmp_path, '''
import logging

log = logging.getLogger(__name__)


def chief_justice_node(state):
    """Chief Justice: resolves the judges' conflicts (final submission)."""
    log.info("chief justice")
    return state
''')
    assert not facts["justice.node"].found and facts["justice.node"].data["stub"]
    assert "does nothing" in facts["justice.node"].rationale
    assert not facts["justice.deterministic"].found
    # one line that computes something is no stub
    facts = _justice(tmp_path / "real", '''
def chief_justice_node(state):
    return {"final": min(o.score for o in state["opinions"])}
''')
    assert facts["justice.node"].found and not facts["justice.node"].data["stub"]


def test_a_test_on_a_judge_s_score_that_answers_a_flag_weighs_no_judge(tmp_path: Path) -> None:
    """Heban-7: ``if defense_score <= 2: return False`` in a helper answers whether a rule
    applies; it weighs no judge's score (no functionality weight), a dict of weights does."""
    code = '''
def defense_overruled(ops, evidence):
    defense_score = next((o.score for o in ops if o.judge == "Defense"), None)
    if defense_score is None or defense_score <= 2:
        return False
    return all(not e.found for e in evidence)


def chief_justice_node(state):
    ops = state["opinions"]
    final = round(sum(o.score for o in ops) / len(ops))
    if defense_overruled(ops, state["evidences"]):
        final = min(final, 3)
    return {"final_score": final}
'''
    rules = _justice(tmp_path / "flag", code)["justice.rules"].data["rules"]
    assert "functionality_weight" not in rules, rules
    weighted = code.replace("final = round(sum(o.score for o in ops) / len(ops))",
                            'w = {"TechLead": 2, "Prosecutor": 1, "Defense": 1}\n'
                            '    final = round(sum(o.score * w[o.judge] for o in ops) / 4)')
    assert "functionality_weight" in _justice(tmp_path / "weights", weighted)[
        "justice.rules"].data["rules"]


def test_a_spread_helper_s_default_is_no_cap(tmp_path: Path) -> None:
    """Heban-7: ``if len(scores) < 2: return 0.0`` in a helper that returns the spread is
    the spread of too few scores, not a cap on the score (no security override)."""
    rules = _justice(tmp_path, '''
def score_variance(ops):
    scores = [o.score for o in ops]
    if len(scores) < 2:
        return 0.0
    return max(scores) - min(scores)


def chief_justice_node(state):
    ops = state["opinions"]
    final = round(sum(o.score for o in ops) / len(ops))
    note = f"spread {score_variance(ops)}"
    return {"final_score": final, "note": note}
''')["justice.rules"].data.get("rules", {})
    assert "security_override" not in rules, rules


def test_a_verdict_that_quotes_the_spread_is_no_spread_helper(tmp_path: Path) -> None:
    """Melaku-GA: a resolver that measures the spread for its tie-break and quotes it in
    its text still caps on words in the judges' arguments (``any("security" in a.lower()
    for a in [p_arg, d_arg, t_arg])``); its constant return is a cap, not the spread of too
    few scores."""
    facts = _justice(tmp_path, '''
def resolve(p_score, d_score, t_score, p_arg, d_arg, t_arg):
    score_range = max(p_score, d_score, t_score) - min(p_score, d_score, t_score)
    flaw = any("security" in arg.lower() for arg in [p_arg, d_arg, t_arg])
    if flaw and p_score <= 2:
        return {"final_score": 3, "reason": "security"}
    if score_range >= 3:
        return {"final_score": t_score, "reason": f"tie-break, range {score_range}"}
    return {"final_score": round((p_score + d_score + t_score) / 3), "reason": "mean"}


def chief_justice_node(state):
    p, d, t = state["opinions"]
    return {"final": resolve(p.score, d.score, t.score, p_arg=p.argument, d_arg=d.argument,
                             t_arg=t.argument)}
''')
    keyword = facts["justice.keyword_rules"]
    assert keyword.found, keyword.rationale
    assert "if flaw and p_score <= 2:" in (keyword.content or "")


def test_a_result_record_that_quotes_the_spread_is_no_spread_helper(tmp_path: Path) -> None:
    """nebiyuephrata: ``return CriterionResult(final_score=..., dissent_summary=...)`` after
    a variance branch; the word rule before it (``"linear" in op.argument`` on architecture
    criteria: ``final_score = 1``) is a cap on words, not a spread helper's default."""
    facts = _justice(tmp_path, '''
class CriterionResult:
    def __init__(self, **fields):
        self.fields = fields


def resolve(ops, name):
    scores = [o.score for o in ops]
    final = round(sum(scores) / len(scores))
    fraud = any("linear" in o.argument.lower() for o in ops)
    if fraud and "architecture" in name:
        final = 1
    spread = max(scores) - min(scores)
    return CriterionResult(final_score=final, dissent=f"spread {spread}", spread=spread)


def chief_justice_node(state):
    return {"final": resolve(state["opinions"], state["name"])}
''')
    keyword = facts["justice.keyword_rules"]
    assert keyword.found, keyword.rationale
    assert "if fraud and \"architecture\" in name:" in (keyword.content or "")


TIE_BREAK = '''
def chief_justice_node(state):
    ops = {o.judge: o for o in state["opinions"]}
    p, d, t = ops["Prosecutor"].score, ops["Defense"].score, ops["TechLead"].score
    final = round((p + d + 2 * t) / 4)
    if max(p, d, t) - min(p, d, t) >= 3:
        final = t  # the Tech Lead breaks the tie
    return {"final_score": final}
'''


def test_a_spread_that_only_picks_a_judge_s_score_is_a_tie_break(tmp_path: Path) -> None:
    """Natnael-Alemseged@interim: ``if score_range >= 3: computed_score = t_score`` is a
    decision on the spread, but no evidence is read again: a tie-break, which holds the
    criterion from full marks, and no re-evaluation (one decision is never both). A spread
    that hands the scores to a helper that reads the evidence again is a re-evaluation; a
    clamp (``max(1, final - 1)``) picks no judge."""
    picked = _justice(tmp_path / "picked", TIE_BREAK)
    assert not picked["justice.variance"].found, picked["justice.variance"].rationale
    assert "only picks among the judges' scores" in picked["justice.variance"].rationale
    tie = picked["justice.tie_break"]
    assert tie.found and tie.location == "nodes/justice.py:7", tie.rationale
    assert "final = t" in tie.rationale
    median = TIE_BREAK.replace("final = t  #", "final = statistics.median([p, d, t])  #")
    assert _justice(tmp_path / "median", "import statistics\n" + median)[
        "justice.tie_break"].found
    # one score of a table of the judges' scores (Melaku-GA: ``final = scores["techlead"]``)
    table = TIE_BREAK.replace("final = t  #", "final = {'p': p, 't': t}['t']  #").replace(
        "final = {'p': p, 't': t}['t']", "scores = {'p': p, 't': t}\n        final = scores['t']")
    assert _justice(tmp_path / "table", table)["justice.tie_break"].found
    for name, line in (("reread", "final = reread(state['evidences'], t)"),
                       ("clamp", "final = max(1, final - 1)")):
        source = TIE_BREAK.replace("final = t  # the Tech Lead breaks the tie", line)
        if name == "reread":
            source += "\n\ndef reread(evidences, t):\n    return t if evidences else 1\n"
        facts = _justice(tmp_path / name, source)
        assert not facts["justice.tie_break"].found, name
        assert facts["justice.variance"].found, name
