"""Chief Justice rules judged against the path that runs when they do not fire: a rule that
scores as every later rule and the default do changes nothing (``justice.unused_rules``);
a spread decision that adopts one judge's score is a tie-break, even clamped or returned
beside a note; the plain mean where no rule fires is read on that path only, and a weight
that applies only where a word or a judge's score test holds is a rule of its own."""

from __future__ import annotations

from pathlib import Path

from .test_code_synthesis import _justice

ONE_JUDGE = '''
def _judge(opinions, name):
    for o in opinions:
        if getattr(o, "judge", None) == name:
            return o
    return None


def resolve(opinions, evidences, dimension_id):
    tech_lead = _judge(opinions, "TechLead")
    p_score = _judge(opinions, "Prosecutor").score
    d_score = _judge(opinions, "Defense").score
    t_score = tech_lead.score
    if d_score >= 4:
        if not any(e.found for e in evidences):
            final = t_score
            dissent = "Defense overruled"
            return (final, "Add evidence.", dissent)
    if dimension_id in ("graph_orchestration", "state_management_rigor"):
        if t_score >= 4:
            final = t_score
            return (final, "See Tech Lead.", None)
    if max(p_score, d_score, t_score) - min(p_score, d_score, t_score) > 2:
        final = t_score
        dissent = f"Variance: {p_score}, {d_score}, {t_score}"
        remediation = getattr(tech_lead, "argument", "")[:300] if tech_lead else "Review."
        return (final, remediation, dissent)
    final = DEFAULT
    return (final, "Review judge opinions.", None)


def chief_justice_node(state):
    out = {}
    for c, ops in state["opinions"].items():
        out[c] = resolve(ops, state["evidences"], c)[0]
    return {"final_scores": out}
'''


def test_rules_that_score_as_every_path_without_them_change_nothing(tmp_path: Path) -> None:
    """zumi123: fact supremacy, the functionality rule and the variance rule each set
    ``final = t_score``, and so do every later rule and the default: none changes a score,
    and the one on the spread only adopts the Tech Lead's score (a tie-break)."""
    facts = _justice(tmp_path, ONE_JUDGE.replace("DEFAULT", "t_score"))
    unused = facts["justice.unused_rules"]
    assert unused.found, unused.rationale
    lines = {item["line"] for item in unused.data["rules"]}
    assert {"nodes/justice.py:15", "nodes/justice.py:19", "nodes/justice.py:23"} <= lines
    assert "as every path without it does" in unused.rationale
    # it says which way the rules change nothing: their score is the one without them (their
    # result is read), and so does the tie-break it adopts a judge's score in
    assert unused.goal.endswith("(it gives the same score as without it)"), unused.goal
    assert "nodes/justice.py:23 (credited as variance re evaluation) gives the same score as " \
        "without it" in unused.rationale
    assert "The decision at nodes/justice.py:23 gives the same score as without it (every " \
        "path without it sets it so: :28" in facts["justice.tie_break"].rationale
    assert "nodes/justice.py:28: final = t_score" in (unused.content or "")
    assert "fact_supremacy" not in facts["justice.rules"].data["rules"]
    tie = facts["justice.tie_break"]
    assert tie.found and "final = t_score" in (tie.content or ""), tie.rationale
    assert not facts["justice.variance"].found
    # the Tech Lead's argument read into the remediation returned beside the score is a note
    noted = _justice(tmp_path / "noted", ONE_JUDGE.replace("DEFAULT", "t_score").replace(
        'getattr(tech_lead, "argument", "")[:300]', "tech_lead.argument[:300]"))
    assert noted["justice.tie_break"].found, noted["justice.tie_break"].rationale
    # a default that is the judges' mean: every rule changes the score, none is inert (and
    # the tie-break that adopts the Tech Lead's score gives another score than without it)
    mean = _justice(tmp_path / "mean", ONE_JUDGE.replace(
        "DEFAULT", "round((p_score + d_score + t_score) / 3)"))
    assert not mean["justice.unused_rules"].found, mean["justice.unused_rules"].rationale
    assert "same score" not in mean["justice.tie_break"].rationale
    assert "fact_supremacy" in mean["justice.rules"].data["rules"]
    # another judge's score, or the same name changed first, is a change
    other = _justice(tmp_path / "other", ONE_JUDGE.replace("DEFAULT", "p_score"))
    assert not other["justice.unused_rules"].found
    lowered = ONE_JUDGE.replace("DEFAULT", "t_score").replace(
        "        if t_score >= 4:\n            final = t_score\n",
        "        if t_score >= 4:\n            final = t_score\n            final = final - 1\n")
    lowered_facts = _justice(tmp_path / "lowered", lowered)
    assert "nodes/justice.py:19" not in {
        item["line"] for item in lowered_facts["justice.unused_rules"].data["rules"]}


def test_a_spread_that_adopts_a_judge_s_score_before_a_clamped_mean_is_a_tie_break(
        tmp_path: Path) -> None:
    """selambeyu: ``if tech_lead and variance > 2: final = tech_lead.score`` else the mean,
    clamped to the scale: the clamp of a score given picks no new value."""
    facts = _justice(tmp_path, '''
def resolve(by_judge):
    tech_lead = by_judge.get("TechLead")
    scores = [o.score for o in by_judge.values()]
    variance = max(scores) - min(scores)
    if tech_lead and variance > 2:
        final = tech_lead.score
    else:
        final = round(sum(scores) / len(scores)) if scores else 3
        final = max(1, min(5, final))
    return final, None


def chief_justice_node(state):
    return {"final_scores": {c: resolve(ops)[0] for c, ops in state["opinions"].items()}}
''')
    tie = facts["justice.tie_break"]
    assert tie.found, tie.rationale
    assert "final = tech_lead.score" in (tie.content or "")
    assert not facts["justice.variance"].found
    assert "variance_re_evaluation" not in facts["justice.rules"].data["rules"]


WORD_GUARDED = '''
def _modular(ops, criterion_id):
    if criterion_id != "graph_orchestration":
        return False
    for o in ops:
        if o.judge == "TechLead" and "modular" in (o.argument or "").lower():
            return True
    return False


def resolve(ops, criterion_id):
    scores = [o.score for o in ops]
    tech = next((o for o in ops if o.judge == "TechLead"), None)
    if _modular(ops, criterion_id):
        if tech and tech.score >= 4:
            final = max(scores)
            return final, "Rule of Functionality"
    final = sum(scores) // len(scores)
    return max(1, min(5, final)), ""


def chief_justice_node(state):
    return {"final_scores": {c: resolve(ops, c)[0] for c, ops in state["opinions"].items()}}
'''


def test_the_plain_mean_is_read_where_no_rule_fires(tmp_path: Path) -> None:
    """Hiwot-Beyene: a rule guarded by a word in the Tech Lead's argument sets the top score;
    when no rule fires the verdict is the floor mean: the plain mean holds, quoted there."""
    facts = _justice(tmp_path, WORD_GUARDED)
    plain = facts["justice.unweighted_mean"]
    assert plain.found, plain.rationale
    assert (plain.content or "").splitlines() == [
        "nodes/justice.py:18: final = sum(scores) // len(scores)"]
    # a mean taken only inside a word rule is that rule's score, not the no-rule path
    inside = WORD_GUARDED.replace("            final = max(scores)\n",
                                  "            final = sum(scores) // len(scores)\n").replace(
        "    final = sum(scores) // len(scores)\n    return max(1, min(5, final)), \"\"",
        "    return max(scores), \"\"")
    assert not _justice(tmp_path / "inside", inside)["justice.unweighted_mean"].found


def test_a_weight_on_some_criteria_names_where_the_mean_is_plain(tmp_path: Path) -> None:
    """lidudagn: the Tech Lead counts twice only on criteria whose id says architecture; every
    other criterion gets the plain mean, and the fact says which."""
    facts = _justice(tmp_path, '''
def resolve(scores, criterion_id):
    if "architecture" in criterion_id.lower() or "orchestration" in criterion_id.lower():
        return round((scores["Prosecutor"] + scores["Defense"] + 2 * scores["TechLead"]) / 4)
    return round(sum(scores.values()) / len(scores))


def chief_justice_node(state):
    return {"final_scores": {c: resolve({o.judge: o.score for o in ops}, c)
                             for c, ops in state["opinions"].items()}}
''')
    plain = facts["justice.unweighted_mean"]
    assert not plain.found
    assert "on the criteria the test at nodes/justice.py:3 picks; on every other criterion" \
        in plain.rationale and "(nodes/justice.py:5)" in plain.rationale, plain.rationale


PRESENT = '''
def resolve(ops, c_id):
    scores = [op.score for op in ops]
    avg_score = sum(scores) / len(scores)
    if c_id == "graph_orchestration":
        tech_lead_op = next((op for op in ops if op.judge == "TechLead"), None)
        if tech_lead_op:
            weighted_scores = scores + [tech_lead_op.score]
            avg_score = sum(weighted_scores) / len(weighted_scores)
    return round(avg_score)


def chief_justice_node(state):
    return {"final_scores": {c: resolve(ops, c) for c, ops in state["opinions"].items()}}
'''


def test_a_weight_in_the_else_of_rules_or_under_a_judge_s_presence_weighs_every_verdict(
        tmp_path: Path) -> None:
    """eyobed7b: the 0.3/0.3/0.4 mean sits in the ``else`` of the rules, the path taken when
    none fires: a judge weighs more there. martha: on one criterion the Tech Lead's score is
    counted twice whenever that judge is present (no threshold): a criterion weight."""
    facts = _justice(tmp_path, '''
def resolve(ops, dim_id):
    p_sc, d_sc = ops["Prosecutor"].score, ops["Defense"].score
    t_sc = ops["TechLead"].score
    if dim_id == "safe_tool_engineering" and p_sc <= 2:
        final_score = min(p_sc, 3)
    elif dim_id == "graph_orchestration":
        final_score = t_sc
    else:
        final_score = round((p_sc * 0.3) + (d_sc * 0.3) + (t_sc * 0.4))
    return final_score


def chief_justice_node(state):
    return {"final_scores": {c: resolve(ops, c) for c, ops in state["opinions"].items()}}
''')
    weighted = facts["justice.unweighted_mean"]
    assert not weighted.found
    assert weighted.rationale == "One judge's score weighs differently (nodes/justice.py:10).", (
        weighted.rationale)
    present = _justice(tmp_path / "present", PRESENT)
    assert not present["justice.unweighted_mean"].found, present[
        "justice.unweighted_mean"].rationale
    # the same weight only where the Tech Lead scores 4 or more: a rule of its own
    threshold = _justice(tmp_path / "threshold", PRESENT.replace(
        "        if tech_lead_op:\n            weighted_scores = scores + [tech_lead_op.score]\n"
        "            avg_score = sum(weighted_scores) / len(weighted_scores)",
        "        if tech_lead_op and tech_lead_op.score >= 4:\n"
        "            avg_score = (avg_score + tech_lead_op.score) / 2"))
    assert threshold["justice.unweighted_mean"].found, threshold[
        "justice.unweighted_mean"].rationale


THREE_SCORES = '''

def chief_justice_node(state):
    return {"final_scores": {c: resolve(o["Prosecutor"].score, o["Defense"].score,
                                        o["TechLead"].score)
                             for c, o in state["opinions"].items()}}
'''


def test_a_weight_in_the_else_of_a_spread_test_is_the_spread_s(tmp_path: Path) -> None:
    """nahdes: ``if variance <= 1: mean ... else: (p + 2 * t + d) / 4``: the else of a test on
    the spread is decided by the spread too, so where no rule fires the mean is plain."""
    facts = _justice(tmp_path, '''
def resolve(p, d, t):
    variance = max(p, d, t) - min(p, d, t)
    if variance <= 1:
        final = round((p + d + t) / 3)
    else:
        final = round((p + t * 2 + d) / 4)
    return final
''' + THREE_SCORES)
    plain = facts["justice.unweighted_mean"]
    assert plain.found and "except when the scores are far apart (nodes/justice.py:7" in (
        plain.rationale), plain.rationale


def test_a_weighted_mean_in_the_else_of_a_wide_spread_test_is_the_no_rule_path(
        tmp_path: Path) -> None:
    """IbnuEyni@interim: ``if variance > 2: 0.25/0.15/0.60 else: 0.30/0.20/0.50``: the else
    is the narrow spread, where no rule fires, and the Tech Lead weighs more there too."""
    facts = _justice(tmp_path, '''
def resolve(p, d, t):
    variance = max(p, d, t) - min(p, d, t)
    if variance > 2:
        final = round(p * 0.25 + d * 0.15 + t * 0.60)
    else:
        final = round(p * 0.30 + d * 0.20 + t * 0.50)
    return final
''' + THREE_SCORES)
    weighted = facts["justice.unweighted_mean"]
    assert not weighted.found, weighted.rationale
    assert "(nodes/justice.py:7)" in weighted.rationale


def test_a_judge_s_confirming_score_deciding_named_criteria_is_the_functionality_weight(
        tmp_path: Path) -> None:
    """ruthasoll: on the architecture criteria the Tech Lead's score decides when it is 4 or
    more (the rubric's functionality weight, a judge's confirming score): a judge weighs more
    there, so the plain mean elsewhere is no failure; the same weight gated on a word in the
    Tech Lead's argument is a word rule of its own."""
    source = '''
def resolve(ops, dim_id):
    p = next(o.score for o in ops if o.judge == "Prosecutor")
    d = next(o.score for o in ops if o.judge == "Defense")
    tl = next(o for o in ops if o.judge == "TechLead")
    final = round((p + d + tl.score) / 3)
    if dim_id == "safe_tool_engineering" and p <= 2:
        final = min(final, 3)
    if dim_id in ["graph_orchestration", "state_management_rigor"] and TEST:
        final = tl.score
    return final


def chief_justice_node(state):
    return {"final_scores": {c: resolve(ops, c) for c, ops in state["opinions"].items()}}
'''
    plain = _justice(tmp_path, source.replace("TEST", "tl.score >= 4"))["justice.unweighted_mean"]
    assert not plain.found, plain.rationale
    assert "on the criteria the test at nodes/justice.py:9 picks" in plain.rationale
    worded = _justice(tmp_path / "w", source.replace("TEST", '"modular" in tl.argument'))
    assert worded["justice.unweighted_mean"].found


def test_the_highest_of_all_scores_taken_on_a_judge_s_confirming_score_weighs_no_judge(
        tmp_path: Path) -> None:
    """A test on the Tech Lead's score (4 or more) that then takes ``max(scores)`` over every
    judge weighs no judge's score more than another's: the Tech Lead's score decides when,
    the highest score of any judge what (no functionality weight). Adopting the Tech Lead's
    own score, or the highest of the scores with the Defense left out, does weigh a judge."""
    source = '''
def resolve(ops):
    scores = [o.score for o in ops]
    tech = next((o for o in ops if o.judge == "TechLead"), None)
    if tech and tech.score >= 4:
        final = VALUE
        return final, "Tech Lead confirms"
    return max(1, min(5, sum(scores) // len(scores))), ""


def chief_justice_node(state):
    return {"final_scores": {c: resolve(ops)[0] for c, ops in state["opinions"].items()}}
'''
    pooled = _justice(tmp_path, source.replace("VALUE", "max(scores)"))
    assert "functionality_weight" not in pooled["justice.rules"].data["rules"]
    assert "(nodes/justice.py:5" not in pooled["justice.unweighted_mean"].rationale
    for n, value in enumerate(("tech.score", "max(1, min(5, round(sum(scores) / len(scores))))",
                               'max(o.score for o in ops if o.judge != "Defense")')):
        facts = _justice(tmp_path / str(n), source.replace("VALUE", value))
        assert facts["justice.rules"].data["rules"].get("functionality_weight") == (
            None if n == 1 else ["nodes/justice.py:5"]), value


def test_a_cap_its_own_test_keeps_the_value_under_is_said_to_change_nothing(
        tmp_path: Path) -> None:
    """``if crit == "safe_tool_engineering" and p <= 2: final = min(p, 3)``: the test keeps
    the Prosecutor's score at 2 or less, so the cap at 3 lowers nothing and the score there
    is that score (a note; the rule still sets the score). A test that lets the value pass
    the cap (``p <= 4``), or a value bound again before the cap, leaves the cap working."""
    source = '''
def resolve(ops, crit):
    p = next(o.score for o in ops if o.judge == "Prosecutor")
    t = next(o.score for o in ops if o.judge == "TechLead")
    if crit == "safe_tool_engineering" and TEST:
        BEFOREfinal = min(p, 3)
    else:
        final = round((p + t) / 2)
    return final


def chief_justice_node(state):
    return {"final_scores": {c: resolve(ops, c) for c, ops in state["opinions"].items()}}
'''
    idle = _justice(tmp_path, source.replace("TEST", "p <= 2").replace("BEFORE", ""))
    rules = idle["justice.rules"]
    assert "the cap min(p, 3) at nodes/justice.py:6 changes nothing: the test at " \
        "nodes/justice.py:5 (crit == 'safe_tool_engineering' and p <= 2) already keeps p " \
        "within it, so the value there is p" in rules.rationale, rules.rationale
    assert "security_override" in rules.data["rules"]
    mirrored = _justice(tmp_path / "m", source.replace("TEST", "3 > p").replace("BEFORE", ""))
    assert "changes nothing" in mirrored["justice.rules"].rationale
    for n, (test, before) in enumerate((("p <= 4", ""), ("p <= 2", "p = p + 2\n        "))):
        working = _justice(tmp_path / str(n), source.replace("TEST", test).replace(
            "BEFORE", before))
        assert "changes nothing" not in working["justice.rules"].rationale, test
