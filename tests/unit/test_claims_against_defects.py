"""A report's feature claims read against the defects the audit's own code facts confirm on
the same behaviour: a score cap said to fire when a check finds a violation, whose cap the
code inverts; a clone said sandboxed in a TemporaryDirectory, written into a ``mkdtemp``
directory nothing removes. A sentence that puts the feature in a later phase claims nothing."""

from __future__ import annotations

from automaton_auditor.forensics.contradictions import contradiction_findings
from automaton_auditor.forensics.pdf.behaviours import BEHAVIOURS
from automaton_auditor.forensics.pdf.claims import extract_feature_claims, extract_statements
from automaton_auditor.state import Finding, RebuiltGraph

GRAPH = RebuiltGraph(builder="g", location="app/graph.py:10",
                     nodes=["repo", "doc", "aggregator", "prosecutor", "defense", "chief"],
                     edges=[("repo", "aggregator"), ("doc", "aggregator"),
                            ("aggregator", "prosecutor"), ("aggregator", "defense"),
                            ("prosecutor", "chief"), ("defense", "chief")],
                     fan_out={"aggregator": ["defense", "prosecutor"]},
                     fan_in={"aggregator": ["doc", "repo"]}, linear=False)


def _found(code: list[Finding], *texts: str) -> list[Finding]:
    claims = extract_statements([(page, text) for page, text in enumerate(texts, start=1)],
                                kinds=BEHAVIOURS)
    return contradiction_findings(claims, code, GRAPH, None)


def _fact(facet: str, found: bool, content: str | None = None, **data: object) -> Finding:
    return Finding(facet=facet, goal=facet, found=found, pattern="failure", confidence=0.85,
                   location=(content or ".").split(": ", 1)[0], content=content,
                   rationale="The cap falls on the repositories the check finds clean.",
                   data=dict(data))


INVERTED = _fact("justice.inverted_override", True,
                 "app/justice.py:20: if ev.found and ev.content:\n"
                 "app/tools.py:40: found=not found_os_system,\n"
                 "app/tools.py:42: else \"No os.system() calls detected\"\n"
                 "app/justice.py:60: if violation: score = min(score, 3)",
                 predicate="app/justice.py:18", written="app/tools.py:38",
                 flag="found_os_system", caps=["app/justice.py:60"],
                 key="safe_tool_engineering")
CAPPED = ("If the RepoInvestigator found os.system() or shell=True and the dimension is "
          "security-related, the score is capped at 3 regardless of Defense arguments.")


def test_a_cap_said_to_fire_on_a_finding_that_the_code_inverts_is_contradicted() -> None:
    found = _found([INVERTED], "Rule 1: Security Override. " + CAPPED)
    assert [f.data["kind"] for f in found] == ["override_claim"]
    assert "capped at 3" in (found[0].content or "")
    assert "app/tools.py:40: found=not found_os_system," in (found[0].content or "")
    assert "inverted" in found[0].rationale
    # the other way round, and by the evidence's key
    assert len(_found([INVERTED], "Safe tool engineering scores are capped at 2 when the "
                      "detectives detect a violation of safe tool engineering.")) == 1
    # told twice, one failure of the code
    assert len(_found([INVERTED], CAPPED, CAPPED.replace("capped at 3", "capped at 2"))) == 1


def test_a_cap_claim_the_inverted_fact_does_not_bear_on_contradicts_nothing() -> None:
    clean = INVERTED.model_copy(update={"found": False})
    assert _found([clean], CAPPED) == []
    assert _found([], CAPPED) == []
    # another check's cap, a cap with no finding that fires it, a hedged or planned cap
    for said in ("If the judges found hallucinated paths, the score is capped at 2.",
                 "The security override caps the score at 3.",
                 "If the detectives found os.system(), the score should be capped at 3.",
                 "If os.system() is not found, nothing is capped."):
        assert _found([INVERTED], said) == [], said


def _cleanup(kept: list[str], **data: object) -> Finding:
    fields: dict[str, object] = {"removed": [], "early": [], "partial": [], "alive": [],
                                 "through_state": False, "on_error": [], **data}
    return _fact("safety.clone_cleanup", False, "\n".join(kept),
                 kept=[k.split(": ", 1)[0] for k in kept], **fields)


MKDTEMP = 'app/git.py:30: dest = tempfile.mkdtemp(prefix="repo_")'
SANDBOX = _fact("safety.clone_sandbox", True,
                "app/git.py:12: with tempfile.TemporaryDirectory() as tmp:\n"
                "app/git.py:13: run(['git', 'clone', url, tmp])\n" + MKDTEMP + "\n"
                "app/git.py:31: run(['git', 'clone', url, dest])",
                locations=["app/git.py:13", "app/git.py:31"],
                tempdir_calls=["app/git.py:12", "app/git.py:30"])
NOT_EARLY = _fact("safety.clone_deleted_early", False, early=[])
SAID = "The repository cloning mechanism uses tempfile.TemporaryDirectory() to sandbox all " \
       "cloned content."


def test_a_clone_said_sandboxed_in_a_temporary_directory_kept_by_mkdtemp() -> None:
    """A clone into a TemporaryDirectory thrown away, and the clone used made again into a
    mkdtemp directory no call removes: the TemporaryDirectory sandbox does not hold."""
    code = [NOT_EARLY, SANDBOX, _cleanup([MKDTEMP], removed=["app/git.py:12"])]
    found = _found(code, SAID)
    assert [f.data["kind"] for f in found] == ["sandbox_claim"]
    assert MKDTEMP in (found[0].content or "") and "app/git.py:30" in found[0].rationale
    # "automatic cleanup" said as well: one directory nothing removes, one contradiction
    only = [NOT_EARLY, SANDBOX, _cleanup([MKDTEMP])]
    cleaned = "Cloning in a temp dir ensures automatic cleanup on exceptions."
    assert [f.data["kind"] for f in _found(only, SAID, cleaned)] == ["sandbox_claim"]
    assert [f.data["kind"] for f in _found(only, cleaned, SAID)] == ["cleanup_claim"]
    # each said again by itself is still told as before
    assert len(_found(only, cleaned, cleaned)) == 2
    # a temporary directory, not named TemporaryDirectory: what mkdtemp makes
    assert _found(code, "Repository cloning runs in temporary directories.") == []


def test_a_temporary_directory_claim_holds_when_the_kept_directory_is_not_the_clone() -> None:
    code = [NOT_EARLY, SANDBOX]
    # removed somewhere (on failure, through the state), kept in a container, or not a
    # directory a clone writes into, or made by TemporaryDirectory itself
    for cleanup in (_cleanup([MKDTEMP], partial=["app/git.py:50"]),
                    _cleanup([MKDTEMP], through_state=True),
                    _cleanup([MKDTEMP], alive=["app/git.py:30"]),
                    _cleanup(['app/out.py:9: out = tempfile.mkdtemp()']),
                    _cleanup(['app/git.py:30: tmp = tempfile.TemporaryDirectory()']),
                    _cleanup([MKDTEMP]).model_copy(update={"found": True})):
        assert _found([*code, cleanup], SAID) == [], cleanup.data


def test_a_feature_put_in_a_later_phase_is_no_claim() -> None:
    future = ("This design decision prepares the architecture for true fan-out/fan-in swarm "
              "orchestration in later phases.")
    for said in (future, "The typed reducers lay the groundwork for the judges running in "
                 "parallel.", "In the next iteration the aggregator gathers the evidence of "
                 "every detective (fan-in)."):
        assert extract_feature_claims([(2, said)]) == [], said
    current = "The aggregator is a fan-in node that waits for every detective."
    assert [c.feature for c in extract_feature_claims([(2, current)])] == ["fan_in"]


def test_a_sentence_in_the_future_tense_or_calling_a_feature_planned_is_no_claim() -> None:
    for said in ("These judges will run in parallel, and their opinions will be collected by "
                 "an aggregator node.",
                 "Fan-out/fan-in planned for Detectives -> EvidenceAggregator.",
                 "The graph will fan out from the aggregator to the three judges in parallel."):
        assert extract_feature_claims([(2, said)]) == [], said
    # the current part of a sentence that also tells the plan is still claimed
    mixed = ("This diagram shows the current detective fan-out/fan-in pattern, followed by the "
             "planned judicial fan-out/fan-in and final synthesis.")
    assert [c.feature for c in extract_feature_claims([(2, mixed)])] == [
        "parallel_detectives", "fan_in"]
