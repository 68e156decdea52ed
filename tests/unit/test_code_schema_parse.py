"""A judge reply validated by a schema output parser (`forensics.code.parsers`) is partial
structured-output enforcement: the offline bench scores it in the middle (2-4), while judges
that parse free text by hand, with no schema, still score low."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.analyze import code_findings
from automaton_auditor.judging.offline import offline_opinion
from automaton_auditor.judging.rules import decide
from automaton_auditor.rubric import load_rubric
from automaton_auditor.state import JUDGES, Evidence, Finding

from .test_code_ast_graph import by_facet, write_repo

HEAD = '''
import json
from langchain_core.output_parsers import JsonOutputParser, PydanticOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field


class OpinionSchema(BaseModel):
    score: int = Field(ge=1, le=5)
    argument: str


def judge_prosecutor(state):
    llm = ChatOpenAI(model="gpt-4o")
'''
PARSE = '''    parser = PydanticOutputParser(pydantic_object=OpinionSchema)
    prompt = state["prompt"] + parser.get_format_instructions()
    reply = llm.invoke(prompt)
    return {"opinions": [parser.parse(reply.content)]}
'''
CHAIN = '''    prompt = ChatPromptTemplate.from_messages([("user", "{evidence}")])
    chain = prompt | llm | PydanticOutputParser(pydantic_object=OpinionSchema)
    return {"opinions": [chain.invoke({"evidence": state["evidence"]})]}
'''
# the parser only writes format instructions; the reply is loaded by hand
UNUSED = '''    parser = PydanticOutputParser(pydantic_object=OpinionSchema)
    reply = llm.invoke(state["prompt"] + parser.get_format_instructions())
    return {"opinions": [json.loads(reply.content)]}
'''
FREE_TEXT = '''    reply = llm.invoke(state["prompt"])
    return {"opinions": [json.loads(reply.content)]}
'''
# a JSON parser with no schema, each item of its answer validated by the model
JSON_VALIDATED = '''    prompt = ChatPromptTemplate.from_messages([("user", "{evidence}")])
    chain = prompt | llm | JsonOutputParser()
    parsed = chain.invoke({"evidence": state["evidence"]})
    return {"opinions": [OpinionSchema.model_validate(op) for op in parsed]}
'''
# the same parser whose answer goes out unvalidated
JSON_ONLY = JSON_VALIDATED.replace("OpinionSchema.model_validate(op) for op in parsed",
                                   "op for op in parsed")
BOUND = '''    parser = PydanticOutputParser(pydantic_object=OpinionSchema)
    structured = llm.with_structured_output(OpinionSchema)
    return {"opinions": [parser.parse(structured.invoke(state["prompt"]).argument)]}
'''


def _findings(tmp_path: Path, body: str) -> list[Finding]:
    files = write_repo(tmp_path, {"src/nodes/judges.py": HEAD + body})
    return code_findings(tmp_path, files)[0]


def _score(findings: list[Finding]) -> int:
    """The offline bench's ruling on structured_output_enforcement over `findings`."""
    rubric = load_rubric()
    dim = next(d for d in rubric.dimensions if d.id == "structured_output_enforcement")
    dossier = [Evidence.from_finding(f, "repo", dim.id) for f in findings
               if f.facet.startswith("llm.")]
    opinions = [offline_opinion(j, dim, dossier) for j in JUDGES]
    return decide(dim, opinions, dossier, rubric).final_score


def test_a_reply_parsed_by_a_schema_parser_is_partial_enforcement(tmp_path: Path) -> None:
    for name, body in (("parse", PARSE), ("chain", CHAIN), ("validated", JSON_VALIDATED)):
        findings = _findings(tmp_path / name, body)
        fact = by_facet(findings, "llm.schema_parse")
        assert fact.found and fact.pattern == "success", name
        assert "OpinionSchema" in fact.rationale and fact.location.startswith(
            "src/nodes/judges.py:")
        assert 2 <= _score(findings) <= 4, name


def test_free_text_and_an_unapplied_parser_still_score_low(tmp_path: Path) -> None:
    for name, body in (("free", FREE_TEXT), ("unused", UNUSED), ("json", JSON_ONLY)):
        findings = _findings(tmp_path / name, body)
        fact = by_facet(findings, "llm.schema_parse")
        assert not fact.found and fact.pattern == "neutral", name
        assert _score(findings) <= 2, name


def test_a_parser_after_a_bound_call_earns_no_second_credit(tmp_path: Path) -> None:
    fact = by_facet(_findings(tmp_path, BOUND), "llm.schema_parse")
    assert fact.found and fact.pattern == "neutral"
    assert "already validates" in fact.rationale
