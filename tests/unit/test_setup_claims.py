"""What a report says the system is built with, read against the code and the repository:
libraries doing a job the code does with another one (source parsing, embeddings, a LangChain
chat provider package), structured output said missing while the code binds it, tests and a
package manager the repository does not have, a fact-supremacy rule the synthesis lacks; and
plans, which claim nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from automaton_auditor.forensics.code.names import code_names
from automaton_auditor.forensics.contradictions import contradiction_findings
from automaton_auditor.forensics.pdf.claims import extract_feature_claims, extract_statements
from automaton_auditor.forensics.pdf.model import Block
from automaton_auditor.forensics.pdf.reader import report_facts
from automaton_auditor.forensics.synthesis_claims import fact_supremacy_findings
from automaton_auditor.forensics.tooling_claims import tooling_findings
from automaton_auditor.state import CodeNames, FeatureClaim, Finding
from tests.unit.report_helpers import ingested

TOOLS = '''from tree_sitter import Parser
from langchain_community.embeddings import OllamaEmbeddings
from langchain_openrouter import ChatOpenRouter


def parse(source):
    parser = Parser()
    return parser.parse(source)


EMBED = OllamaEmbeddings(model="nomic-embed-text")
llm = ChatOpenRouter(model="openai/gpt-4o")
'''


def _names(tmp_path: Path, text: str = TOOLS) -> CodeNames:
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / "tools.py").write_text(text)
    return code_names(tmp_path, ["src/tools.py"])


def _claims(*texts: str) -> list[FeatureClaim]:
    return extract_statements([(page, text) for page, text in enumerate(texts, start=1)])


def _said(names: CodeNames, *texts: str, code: list[Finding] | None = None) -> list[Finding]:
    return [f for f in contradiction_findings(_claims(*texts), code or [], None, names)
            if f.facet == "claims.contradictions"]


@pytest.mark.parametrize(("sentence", "module", "line"), [
    ("Decision: Implement repository analysis using Abstract Syntax Tree (AST) parsing via "
     "Python's ast module instead of regex patterns.", "ast", "7: parser = Parser()"),
    ("- Embeddings: Sentence-transformers all-MiniLM-L6-v2 provides fast, local semantic "
     "search without API costs", "sentence_transformers", "11: EMBED = OllamaEmbeddings("),
    ("Decision: Use OpenAI's gpt-4 or gpt-4o-mini via langchain-openai for judge "
     "evaluations.", "langchain_openai", "12: llm = ChatOpenRouter("),
])
def test_a_library_the_code_does_that_job_without_is_a_contradiction(
        tmp_path: Path, sentence: str, module: str, line: str) -> None:
    found = _said(_names(tmp_path), sentence)
    assert [f"no Python file imports {module}" in f.rationale for f in found] == [True]
    assert f"src/tools.py:{line}" in (found[0].content or "")


def test_libraries_the_code_uses_plans_and_denials_contradict_nothing(tmp_path: Path) -> None:
    names = _names(tmp_path)
    assert _said(names, "We parse source files with tree-sitter.",
                 "Embeddings: OllamaEmbeddings via langchain-community.",
                 "We can extend to tree-sitter grammars later if needed.",
                 "Use Python's ast module for parsing in the next phase.",
                 "The parser uses tree-sitter rather than Python's ast module.",
                 "Python's ast module was replaced by tree-sitter.",
                 "Judges run via langchain-openrouter.") == []
    # a chat model picked at run time may well come from the package the report names
    picked = _names(tmp_path, TOOLS + "from langchain.chat_models import init_chat_model\n"
                                      "other = init_chat_model('openai:gpt-4o')\n")
    assert _said(picked, "Judges call GPT-4 via langchain-openai.") == []


STRUCTURED = Finding(facet="llm.structured_output", goal="Judges bind a schema", found=True,
                     pattern="success", location="src/agent.py:107", confidence=0.9,
                     rationale="1 binding(s) to: .state.JudicialOpinion.",
                     content="src/agent.py:107: llm.with_structured_output(JudicialOpinion)")


def test_structured_output_said_missing_that_the_code_binds_is_a_contradiction(
        tmp_path: Path) -> None:
    names = _names(tmp_path)
    facts = _said(names, "Prosecutor, Defense, TechLead skeletons only-no prompt engineering or "
                         "structured output integration",
                  "with_structured_output(J udicialOpinion) not implemented",
                  code=[STRUCTURED])
    assert len(facts) == 2 and all(f.data["kind"] == "denial" for f in facts)
    assert "src/agent.py:107: llm.with_structured_output(JudicialOpinion)" in (
        facts[0].content or "")
    # a peer's code, an admitted gap, or code without the binding: no contradiction
    assert _said(names, "No structured output enforcement: the peer's judge nodes did not "
                        "use .with_structured_output(JudicialOpinion).", code=[STRUCTURED]) == []
    assert _said(names, "Known gap: structured output is not yet implemented.",
                 code=[STRUCTURED]) == []
    assert _said(names, "with_structured_output(JudicialOpinion) not implemented") == []


def test_tests_and_a_package_manager_the_repository_lacks_are_contradictions() -> None:
    claims = _claims("Testing Framework \u2705 pytest + coverage setup; unit tests for tools "
                     "and state models",
                     "Project Setup \u2705 Poetry environment with dependencies (langchain)")
    files = ["pyproject.toml", "uv.lock", "src/app/agent.py"]
    facts = tooling_findings(claims, files)
    assert [f.data["kind"] for f in facts] == ["tests_claim", "manager_claim"]
    assert "uv.lock: present" in (facts[1].content or "")
    # the files are there, or the sentence is a plan, a gap or a drawn tree's entry
    assert tooling_findings(claims, [*files, "tests/test_agent.py", "poetry.lock"]) == []
    assert tooling_findings(_claims(
        "We will add unit tests for the tools.", "No unit tests for the judges yet.",
        "\u2502 \u251c\u2500\u2500 test_repo_tools.py # Unit tests for AST parsing",
        "Dependencies should be managed with Poetry."), files) == []


RULES = Finding(facet="justice.rules", goal="Rules", found=True, pattern="success",
                location="src/justice.py:40", confidence=0.75, rationale="Rules: ...",
                data={"rules": {"security_override": ["src/justice.py:44"]}})
NODE = Finding(facet="justice.node", goal="Synthesis node", found=True, pattern="success",
               location="src/justice.py:5", confidence=0.9, rationale="Synthesis starts here.")


def test_fact_supremacy_said_applied_that_no_rule_reads_is_a_contradiction() -> None:
    said = _claims("The final node resolves conflicts using hardcoded deterministic rules "
                   "(e.g., \"Fact Supremacy\" where forensic data overrules judge "
                   "interpretation).")
    facts = fact_supremacy_findings(said, [RULES, NODE])
    assert len(facts) == 1 and "security_override" in facts[0].rationale
    has = RULES.model_copy(update={"data": {"rules": {"fact_supremacy": ["src/justice.py:50"]}}})
    assert fact_supremacy_findings(said, [has, NODE]) == []
    # a rule on words may read the evidence's words: not told apart here
    words = Finding(facet="justice.keyword_rules", goal="Word rules", found=True,
                    pattern="failure", location="src/justice.py:22", confidence=0.8,
                    rationale="1 decision(s) change the score because ... contains a word.")
    assert fact_supremacy_findings(said, [RULES, NODE, words]) == []
    assert fact_supremacy_findings(_claims(
        "The Chief Justice will apply Fact Supremacy.", "Gap: no fact supremacy rule yet."),
        [RULES, NODE]) == []
    # the plan words are the feature claims' (`claims.PLAN_WORDS`): "pending" too
    assert fact_supremacy_findings(_claims(
        "The Chief Justice applies Fact Supremacy (pending)."), [RULES, NODE]) == []


def test_fact_supremacy_said_of_code_that_reads_the_evidence_says_what_it_does() -> None:
    """nuhaminae reads the evidence (for a separate criterion's text, and in a cap that never
    fires) but lets it change no score; Bnobody47's evidence only caps a score at 3. Code
    that reads none keeps "no rule ... reads the evidence"."""
    said = _claims("The Chief Justice applies fact supremacy: detective evidence overrides "
                   "judge opinions.")
    rules = {"dissent_requirement": ["src/justice.py:95"]}

    def why(**data: object) -> str:
        found = fact_supremacy_findings(said, [RULES.model_copy(update={"data": data}), NODE])
        assert len(found) == 1
        return found[0].rationale

    assert "(fact supremacy); no rule of the synthesis code reads the evidence (rules it " \
        "applies: dissent_requirement)." in why(rules=rules)
    read = why(rules=rules, evidence=["src/justice.py:88", "src/justice.py:115"])
    assert "the synthesis code reads the evidence (src/justice.py:88), but no rule lets the " \
        "evidence change a score (rules it applies: dissent_requirement)." in read
    capped = why(rules={**rules, "security_override": ["src/justice.py:121"]},
                 evidence=["src/justice.py:71", "src/justice.py:121"])
    assert "the evidence only caps a score at a fixed value (security override, " \
        "src/justice.py:121); no rule lets it overrule the judges otherwise" in capped
    # a cap on a judge's score reads no evidence: the evidence still changes nothing
    assert "but no rule lets the evidence change a score" in why(
        rules={"security_override": ["src/justice.py:44"]}, evidence=["src/justice.py:71"])


def test_fact_supremacy_listed_under_a_lead_in_naming_the_synthesis_is_said_of_it() -> None:
    """nuhaminae: "Conflicts are resolved by the ChiefJustice using deterministic rules:"
    over a list whose item says "Fact supremacy: Detective evidence overrides judge
    opinions.", while the synthesis has no such rule. A report's blocks give the lead-in."""
    section = ("Dialectical Synthesis",)
    lead = Block("paragraph", "Conflicts are resolved by the ChiefJustice using deterministic "
                 "rules:", 1, section=section)
    rule = Block("paragraph", "Fact supremacy: Detective evidence overrides judge opinions.",
                 1, section=section)
    other = Block("paragraph", "Security override: Vulnerabilities cap scores at 3.", 1,
                  section=section)

    def facts(*blocks: Block) -> list[Finding]:
        report = ingested([Block("heading", section[0], 1, level=1), *blocks], 1)
        return fact_supremacy_findings(report_facts(report).claims, [RULES, NODE])

    found = facts(lead, other, rule)
    assert [f.location for f in found] == ["report p.1"]
    assert "Detective evidence overrides judge opinions" in (found[0].content or "")
    # alone, or under a lead-in that plans or hedges, the rule is said of nothing built
    assert facts(other, rule) == []
    for hedged in ("The ChiefJustice will resolve conflicts using deterministic rules:",
                   "Conflicts should be resolved by the ChiefJustice using these rules:"):
        assert facts(Block("paragraph", hedged, 1, section=section), rule) == [], hedged
    # a sentence that names the synthesis itself is read alone: a hedge in the lead-in
    # does not take it back
    said = Block("paragraph", "The Chief Justice node applies hardcoded deterministic rules "
                 "(security override, fact supremacy) to resolve conflicts.", 1, section=section)
    denial = Block("paragraph", "The system does not use a single grader LLM:", 1,
                   section=section)
    assert len(facts(denial, said)) == 1


def test_future_work_is_no_feature_claim() -> None:
    assert extract_feature_claims([(20, "Conditional Edges (Future Enhancement): route on "
                                         "variance.")]) == []
    assert extract_feature_claims([(2, "The final phase, where judicial fan-out and "
                                        "synthesis will be layered on top.")]) == []
    # a feature marked pending beside a priority tag is a plan (yohans-kasaw's gap list)
    for planned in ("Auto-cyclic graph refinement requires manual trigger; conditional edge "
                    "automation pending (P1)", "Conditional routing [TODO] for failures.",
                    "Conditional edges: (P2) planned.", "Conditional routing status: deferred"):
        assert extract_feature_claims([(2, planned)]) == [], planned
    # ... but a bare "P1", and a plan word that is no status, mark nothing
    for said in ("The P1 priority queue works; conditional edges route failures to the "
                 "error handler.", "Conditional edges route pending evidence to the judges.",
                 "Conditional edges (planner to executor) route failures."):
        assert [c.feature for c in extract_feature_claims([(2, said)])] == \
            ["conditional_routing"], said
    # other gaps left as future work: what the sentence names is still described
    said = ("The graph routes with conditional edges, leaving diagram generation as future "
            "work.")
    assert [c.feature for c in extract_feature_claims([(3, said)])] == ["conditional_routing"]
