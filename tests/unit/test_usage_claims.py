"""Report statements about what the code calls, read against the names the code uses: a file
said to use a module's function it never calls, quoted code building a class the repository
never names, and detectives said to run in parallel when one runs alone first."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.code.names import code_names, module_names
from automaton_auditor.forensics.contradictions import contradiction_findings
from automaton_auditor.forensics.crosscheck import cross_check
from automaton_auditor.forensics.fanout import detectives_run_first
from automaton_auditor.forensics.pdf.claims import extract_statements
from automaton_auditor.judging.caps import confirmed_caps
from automaton_auditor.state import (
    CodeNames,
    Evidence,
    FeatureClaim,
    Finding,
    RebuiltGraph,
    ReportFacts,
)

CLONE = '''import subprocess
from tempfile import mkdtemp as make_dir
import tempfile


def clone(url):
    path = make_dir(prefix="audit_")
    subprocess.run(["git", "clone", url, path], timeout=60)
    return path
'''
JUDGES = '''from langchain_google_genai import ChatGoogleGenerativeAI

llm = ChatGoogleGenerativeAI(model="gemini-2.0-flash")
'''


def _repo(tmp_path: Path) -> CodeNames:
    (tmp_path / "src" / "tools").mkdir(parents=True)
    (tmp_path / "src" / "tools" / "clone.py").write_text(CLONE)
    (tmp_path / "src" / "judges.py").write_text(JUDGES)
    return code_names(tmp_path, ["src/tools/clone.py", "src/judges.py", "README.md"])


def _contradictions(names: CodeNames, *texts: str) -> list[Finding]:
    claims = extract_statements([(page, text) for page, text in enumerate(texts, start=1)])
    return [f for f in contradiction_findings(claims, [], None, names)
            if f.facet == "claims.contradictions"]


def test_module_names_resolve_imports_and_keep_the_first_line() -> None:
    names = module_names(CLONE)
    assert names["tempfile.mkdtemp"] == '7: path = make_dir(prefix="audit_")'
    assert names["subprocess.run"].startswith("8: subprocess.run(")
    assert module_names("def broken(:\n") == {}


def test_a_file_said_to_call_a_function_of_a_module_it_uses_otherwise(tmp_path: Path) -> None:
    names = _repo(tmp_path)
    # the PDF broke the path and the name at a space: both are read joined
    facts = _contradictions(names, "src/tools/clone .py uses tempfile.Temporary Directory() "
                                   "but lacks containerized isolation.")
    assert len(facts) == 1 and facts[0].location == "report p.1"
    assert "src/tools/clone.py uses tempfile.TemporaryDirectory()" in facts[0].rationale
    assert 'src/tools/clone.py:7: path = make_dir(prefix="audit_")' in (facts[0].content or "")
    assert facts[0].data["kind"] == "usage"


def test_true_hedged_or_uncheckable_calls_contradict_nothing(tmp_path: Path) -> None:
    names = _repo(tmp_path)
    assert _contradictions(
        names, "src/tools/clone.py uses tempfile.mkdtemp() for every clone.",
        "src/tools/clone.py calls subprocess.run() with a timeout.",
        "src/tools/clone.py should use tempfile.TemporaryDirectory() instead.",
        "src/tools/clone.py uses shutil.rmtree() to clean up.",  # a module the file never uses
        "src/missing.py uses tempfile.TemporaryDirectory().") == []


def test_quoted_code_building_a_class_the_repository_never_names(tmp_path: Path) -> None:
    names = _repo(tmp_path)
    facts = _contradictions(names, 'llm = ChatOpenAI(model="gpt-4o", temperature=0.2)'
                                   '.with_structured_output(JudicialOpinion)')
    assert len(facts) == 1 and "ChatOpenAI" in facts[0].rationale
    assert "src/judges.py:3: llm = ChatGoogleGenerativeAI(" in (facts[0].content or "")
    assert _contradictions(names, 'llm = ChatGoogleGenerativeAI(model="gemini-2.0-flash")',
                           'For example, llm = ChatOpenAI(model="gpt-4o") would also work.',
                           "builder = StateGraph(AgentState)") == []
    assert _contradictions(CodeNames(), 'llm = ChatOpenAI(model="gpt-4o")') == []


def test_a_chat_model_class_the_report_names_and_the_code_never_builds(tmp_path: Path) -> None:
    names = _repo(tmp_path)
    facts = _contradictions(names, "Choice: OpenAI gpt-4o via ChatOpenAI for every judge.")
    assert len(facts) == 1 and "the system uses ChatOpenAI" in facts[0].rationale
    assert "src/judges.py:3: llm = ChatGoogleGenerativeAI(" in (facts[0].content or "")
    assert _contradictions(
        names, "The judges run on Gemini via ChatGoogleGenerativeAI.",  # true
        "We could switch to ChatOpenAI later.",  # hedged
        "ChatOpenAI was considered and rejected.") == []  # no 'uses' claim
    # Code that builds no chat model class (a provider chosen at run time) contradicts nothing.
    (tmp_path / "src" / "judges.py").write_text(
        'from langchain.chat_models import init_chat_model\nllm = init_chat_model("m")\n')
    runtime = code_names(tmp_path, ["src/tools/clone.py", "src/judges.py"])
    assert _contradictions(runtime, "Choice: OpenAI gpt-4o via ChatOpenAI.") == []


def test_one_misquoted_call_caps_report_accuracy_at_three(tmp_path: Path) -> None:
    names = _repo(tmp_path)
    facts = ReportFacts(readable=True, claims=[FeatureClaim(
        feature="api_use", sentence="src/tools/clone.py uses tempfile.TemporaryDirectory().",
        page=4)])
    found = cross_check(facts, ["src/tools/clone.py"], None, names=names).findings
    evidence = [Evidence.from_finding(f, "aggregator", "report_accuracy") for f in found]
    caps = confirmed_caps("report_accuracy", evidence)
    assert caps and caps[0][0].cap == 3 and caps[0][1].location == "report p.4"
    assert not [f for f in cross_check(facts, ["src/tools/clone.py"], None).findings
                if f.facet == "claims.contradictions"]


SERIAL = RebuiltGraph(
    nodes=["repo_investigator", "router", "doc_analyst", "vision_inspector", "aggregator"],
    edges=[("__start__", "repo_investigator"), ("repo_investigator", "router"),
           ("router", "doc_analyst"), ("router", "vision_inspector"),
           ("doc_analyst", "aggregator"), ("vision_inspector", "aggregator")],
    fan_out={"router": ["doc_analyst", "vision_inspector"]},
    fan_in={"aggregator": ["doc_analyst", "vision_inspector"]}, linear=False)


# the repository detective runs first and is itself the fan-out's source
SOURCE_FIRST = RebuiltGraph(
    nodes=["repo_investigator", "doc_analyst", "vision_inspector", "aggregator"],
    edges=[("__start__", "repo_investigator"), ("repo_investigator", "doc_analyst"),
           ("repo_investigator", "vision_inspector"), ("doc_analyst", "aggregator"),
           ("vision_inspector", "aggregator")],
    fan_out={"repo_investigator": ["doc_analyst", "vision_inspector"]},
    fan_in={"aggregator": ["doc_analyst", "vision_inspector"]}, linear=False)


def test_a_detective_named_in_a_parallel_claim_that_runs_alone_first() -> None:
    why = detectives_run_first("Multiple tools (AST, Vision, Doc) run in parallel.", SERIAL)
    assert why and "'repo_investigator' runs before the detective fan-out" in why
    assert detectives_run_first("The Vision and Doc detectives run in parallel.", SERIAL) is None
    # the repository detective is itself the fan-out's source: it runs first
    source = SOURCE_FIRST
    why = detectives_run_first("Detectives (RepoInvestigator, DocSearch) launch "
                               "simultaneously.", source)
    assert why and "it is the fan-out's source" in why
    assert detectives_run_first("DocAnalyst and VisionInspector run in parallel.", source) is None
    # ... and also feeds the join its fan-out leads to: the join is no detective beside them
    feeds = source.model_copy(update={
        "edges": [*source.edges, ("repo_investigator", "aggregator")],
        "fan_out": {"repo_investigator": ["aggregator", "doc_analyst", "vision_inspector"]}})
    assert detectives_run_first("Detectives (RepoInvestigator, DocSearch) launch "
                                "simultaneously.", feeds)
    # a clone node first, but a repository detective in the fan-out: the claim holds
    clone_first = SERIAL.model_copy(update={
        "nodes": [*SERIAL.nodes, "repo_detective"],
        "fan_out": {"router": ["doc_analyst", "repo_detective", "vision_inspector"]}})
    assert detectives_run_first("RepoInvestigator, DocAnalyst and VisionInspector run in "
                                "parallel.", clone_first) is None
    # a sentence that orders them says the repository detective runs first
    assert detectives_run_first("After the RepoInvestigator clones the repository, the Doc "
                                "and Vision detectives run in parallel.", SERIAL) is None
    # a fan-out target of no known kind may be the repository detective
    unknown = SERIAL.model_copy(update={
        "nodes": [*SERIAL.nodes, "investigator"],
        "fan_out": {"router": ["doc_analyst", "investigator", "vision_inspector"]}})
    assert detectives_run_first("Repo, Doc and Vision detectives run in parallel.",
                                unknown) is None
    # a node on a loop through the fan-out runs after it too: not "first"
    looped = SERIAL.model_copy(update={"edges": [*SERIAL.edges,
                                                 ("aggregator", "repo_investigator")]})
    assert detectives_run_first("AST, Vision and Doc tools run in parallel.", looped) is None


def test_the_contradicted_sentence_is_the_feature_verdict() -> None:
    facts = ReportFacts(readable=True, claims=[
        FeatureClaim(feature="parallel_detectives", page=1,
                     sentence="The detectives run in parallel."),
        FeatureClaim(feature="parallel_detectives", page=2,
                     sentence="Detective fan-out: the AST, Vision and Doc tools run in "
                              "parallel to collect evidence.")])
    feature = [f for f in cross_check(facts, [], SERIAL).findings
               if f.facet == "claims.features"]
    assert len(feature) == 1 and feature[0].pattern == "failure"
    assert feature[0].location == "report p.2"


def test_a_method_said_to_be_called_that_no_file_names_is_a_misquote(tmp_path: Path) -> None:
    names = _repo(tmp_path)
    facts = _contradictions(names, "5/5 POST-REFACTOR: Every judge node now uses\n"
                                   ".with_structured_output(). No more free-form parsing.")
    assert len(facts) == 1 and facts[0].data["said"] == ["with_structured_output()"]
    assert "no 'with_structured_output'" in (facts[0].content or "")
    # a name the code holds, a method said to be missing or wanted, and plain words are none
    assert _contradictions(
        names, "The clone runs through make_dir() from tempfile.",
        "The judges lack .with_structured_output() and should use it.",
        "The rubric expects judges bound with .with_structured_output().",
        "Judges are invoked through the usual chat call().") == []


def test_a_pdf_library_the_code_never_imports_while_it_reads_pdfs_with_another(
        tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "doc_tools.py").write_text(
        "from pypdf import PdfReader\n\n\ndef read(path):\n    return PdfReader(path).pages\n")
    names = code_names(tmp_path, ["src/doc_tools.py"])
    said = ("doc_tools.py implements a RAG-lite PDF ingestion system using Docling for text "
            "extraction.")
    found = _contradictions(names, said)
    assert len(found) == 1 and found[0].data["said"] == ["Docling"]
    assert "no Python file imports docling" in found[0].rationale
    assert "src/doc_tools.py:5: return PdfReader(path).pages" in (found[0].content or "")
    # the library the code does import, a hedged plan, or code that reads no PDF: no claim
    assert _contradictions(names, said.replace("Docling", "pypdf")) == []
    assert _contradictions(names, "We plan to move doc_tools.py to Docling later.") == []
    assert _contradictions(names, "● Concrete Action: Implement a fallback extractor using "
                                  "standard Docling text matching.") == []
    # a contrast hedges its own clause only, a plan or an example the whole sentence
    assert len(_contradictions(names, "Rather than dumping whole PDF reports into context, "
                                      "we implemented an approach using the Docling package."))
    assert _contradictions(names, "We read PDFs with pypdf rather than with Docling.") == []
    assert _contradictions(names, "Instead of Docling, the reader works with pypdf.") == []
    assert _contradictions(names, "Later we will parse reports using Docling.") == []
    bare = code_names(tmp_path, [])
    assert _contradictions(bare, said) == []


def test_a_module_function_the_code_never_calls_while_it_uses_the_module(
        tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "repo_tools.py").write_text(
        "import tempfile\nfrom subprocess import run\n\n\ndef clone(url):\n"
        "    root = tempfile.mkdtemp()\n    run(['git', 'clone', url, root], timeout=60)\n"
        "    return root\n")
    names = code_names(tmp_path, ["src/repo_tools.py"])
    said = ("Sandboxing: tempfile.TemporaryDirectory is used to clone third-party repositories "
            "into the /tmp space.")
    found = _contradictions(names, said)
    assert len(found) == 1 and found[0].data["said"] == ["tempfile.TemporaryDirectory"]
    assert "src/repo_tools.py:6: root = tempfile.mkdtemp()" in (found[0].content or "")
    # the function the code calls, a module the code never uses, what the system looks for
    # in audited code, a file name, or a plan: no claim
    assert _contradictions(names, "The clone uses tempfile.mkdtemp() and subprocess.run.") == []
    assert _contradictions(names, "Reducers are built with operator.add.") == []
    assert _contradictions(names, "The detective flags subprocess.Popen with shell=True.") == []
    assert _contradictions(names, "Settings are read with config.yaml at start.") == []
    assert _contradictions(names, "We will switch to tempfile.TemporaryDirectory.") == []
    assert _contradictions(names, "The rubric favors tempfile.TemporaryDirectory; this project "
                                  "clones into tempfile.mkdtemp, subprocess.run with list "
                                  "args, no os.system.") == []


def test_the_repository_s_own_module_run_as_a_script_is_no_function(tmp_path: Path) -> None:
    """ruthasoll: "run the auditor via uv run python -m src.graph --repo URL": src.graph is
    src/graph.py, a module of the repository, not a function of a module ``src``."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "graph.py").write_text(
        "from src import tools\n\n\ndef main():\n    return tools.clone('u')\n")
    (tmp_path / "src" / "tools.py").write_text("def clone(url):\n    return url\n")
    names = code_names(tmp_path, ["src/graph.py", "src/tools.py"])
    said = "A senior engineer can run the auditor via uv run python -m src.graph --repo URL."
    assert _contradictions(names, said) == []
    # a name no module of the repository carries is still read
    other = "The graph is built with src.build_everything at start."
    assert [f.data["said"] for f in _contradictions(names, other)] == [["src.build_everything"]]


def test_a_module_function_a_table_cell_wrapped_in_two_is_read_whole(tmp_path: Path) -> None:
    """Ahmed-Hibet p.8: "(used with tempfile.TemporaryDire ctory() in the node)", a name a
    table cell broke, over code that calls tempfile.TemporaryDirectory()."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "nodes.py").write_text(
        "import tempfile\n\n\ndef clone(url):\n    with tempfile.TemporaryDirectory() as tmp:\n"
        "        return tmp\n\n\ndef shot():\n    return tempfile.mkstemp()\n")
    names = code_names(tmp_path, ["src/nodes.py"])
    assert _contradictions(names, "clone_repo() requires a target_dir (used with "
                                  "tempfile.TemporaryDire ctory() in the node).") == []
    # a join the code does not confirm is no wrap
    found = _contradictions(names, "The clone is made with tempfile.TemporaryDire ctorial() "
                                   "in the node.")
    assert len(found) == 1 and found[0].data["said"] == ["tempfile.TemporaryDire"]


def test_an_ast_visitor_no_file_names_is_a_misquote(tmp_path: Path) -> None:
    names = _repo(tmp_path)
    facts = _contradictions(names, "Visitor Pattern: A visitor pattern is employed to traverse "
                                   "and process the AST.",
                            "Traversal Strategy: Implements ast.NodeVisitor for a depth-first "
                            "search of node patterns.")
    assert len(facts) == 2 and facts[0].data["said"] == ["an AST visitor"]
    # a planned visitor is none, and code that defines one holds the claim
    assert _contradictions(names, "We will replace ast.walk with an ast.NodeVisitor.") == []
    (tmp_path / "src" / "tools" / "ast_tools.py").write_text(
        "import ast\n\n\nclass Finder(ast.NodeVisitor):\n    def visit_Call(self, node):\n"
        "        self.generic_visit(node)\n")
    visiting = code_names(tmp_path, ["src/tools/clone.py", "src/tools/ast_tools.py"])
    assert _contradictions(visiting, "A visitor pattern is employed to traverse the AST.") == []


def test_a_module_function_said_utilized_in_a_clause_of_its_own(tmp_path: Path) -> None:
    # "We utilize X for all git clone operations, ensuring code is never dropped ...": the
    # verb is a use, and the purpose clause after it hedges nothing about the call
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "repo_tools.py").write_text(
        "import tempfile\n\n\ndef clone(url):\n    return tempfile.mkdtemp(prefix='r_')\n")
    names = code_names(tmp_path, ["src/repo_tools.py"])
    found = _contradictions(names, "Temporary Environments: We utilize "
                                   "tempfile.TemporaryDirectory() for all git clone "
                                   "operations, ensuring code is never dropped into the live "
                                   "working directory.")
    assert len(found) == 1 and found[0].data["said"] == ["tempfile.TemporaryDirectory"]
    assert "src/repo_tools.py:5:" in (found[0].content or "")
    # a hedge before the name or in its own clause still takes the claim back
    assert _contradictions(names, "We never utilize tempfile.TemporaryDirectory() here.") == []
    assert _contradictions(names, "Later we will leverage tempfile.TemporaryDirectory() for "
                                  "clones, as planned.") == []


def test_a_count_of_parallel_detectives_the_fan_out_does_not_hold() -> None:
    """ "three parallel investigators" while the repository detective runs first and fans out
    to the other two: the count is wrong ("following" protocols orders nothing). A fan-out
    of all three, or a count of two, holds."""
    source = SOURCE_FIRST
    said = "The detective layer implements three parallel investigators following protocols:"
    why = detectives_run_first(said, source)
    assert why and '"three parallel investigators"' in why and "fan-out's source" in why
    assert detectives_run_first("Two detectives run in parallel.", source) is None
    full = source.model_copy(update={
        "nodes": [*source.nodes, "start"],
        "edges": [("__start__", "start"), ("start", "repo_investigator"),
                  ("start", "doc_analyst"), ("start", "vision_inspector")],
        "fan_out": {"start": ["doc_analyst", "repo_investigator", "vision_inspector"]}})
    assert detectives_run_first(said, full) is None
