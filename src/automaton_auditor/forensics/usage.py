"""Report statements about what the code calls, read against the names the code uses
(`forensics.code.names`).

Six clear cases only: a sentence saying a repository file uses a module's function
("src/tools/repo_tools.py uses tempfile.TemporaryDirectory()") about a file that uses that
module but never that name; code the report quotes that builds an object of a class
("llm = ChatOpenAI(model=...)") that no tracked Python file names at all; and a chat model
class the report says the system runs on ("gpt-4o via ChatOpenAI") that no file names while
the code builds another one (ChatOllama); a method the report says the code calls
("every judge uses .with_structured_output()") that no file names at all; and a PDF library
the report says the system uses ("ingestion using Docling") that no file imports while the
code reads PDFs with another one (pypdf); and a syntax tree said to be walked by a visitor
("a visitor pattern is employed to traverse the AST") where no file names one. A file the
code index does not hold, a module the file never uses, or a hedged sentence ("should use",
"instead of") contradicts nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from automaton_auditor.forensics.pdf.claims import (
    API_USE,
    CHAT_CLASS,
    LIBRARY_USE,
    METHOD_USE,
    MODULE_API,
    QUOTED_CALL,
)
from automaton_auditor.state import CodeNames

# Words that make the statement a plan, a contrast or a denial rather than a description.
_HEDGE = re.compile(r"\b(?:not|never|no\s+longer|instead|rather|replac\w*|should|could|would|"
                    r"will|may|might|plan\w*|todo|future|migrat\w*|switch\w*|e\.g|example)\b",
                    re.IGNORECASE)
# A method said to be missing, or what a rubric or a reviewer asks for, is no claim of a call.
_ABSENT = re.compile(r"\b(?:lack\w*|missing|absent|without|rubric|expect\w*|requir\w*|"
                     r"recommend\w*|peers?)\b", re.IGNORECASE)
MAX_QUOTED = 3  # code lines quoted per statement


@dataclass(frozen=True)
class Misquote:
    """What the report says the code calls, and the code lines that show otherwise."""

    said: str
    rationale: str
    code: list[str]
    data: dict[str, object] = field(default_factory=dict)


def _file(path: str, modules: dict[str, dict[str, str]]) -> str | None:
    """The audited file a cited path (without ``.py``) names: exactly, or as the one file
    ending with it."""
    path = path.lstrip("./")
    if f"{path}.py" in modules:
        return f"{path}.py"
    hits = [f for f in modules if f.endswith(f"/{path}.py")]
    return hits[0] if len(hits) == 1 else None


def api_misquotes(sentence: str, names: CodeNames) -> list[Misquote]:
    """Each "<file> uses <module.name>()" in the sentence where the file uses other names of
    that module but never this one (nor anything under it)."""
    found = []
    for match in API_USE.finditer(sentence):
        if _HEDGE.search(sentence[: match.start("api")]):
            continue
        path = _file(match["path"], names.modules)
        module, _, attr = match["api"].partition(".")
        api = f"{module}.{attr.replace(' ', '')}"
        used = names.modules.get(path or "", {})
        same = sorted(((k, v) for k, v in used.items() if k.split(".")[0] == module),
                      key=lambda item: int(item[1].split(":")[0]))
        if path is None or not same or any(k == api or k.startswith(api + ".") for k in used):
            continue
        code = [f"{path}:{where}" for _, where in same[:MAX_QUOTED]]
        found.append(Misquote(
            f"{path} uses {api}()",
            f"The report says {path} uses {api}(); the file uses {module} "
            f"({', '.join(sorted({k for k, _ in same})[:4])}) but never {api}.",
            code, {"path": path, "api": api}))
    return found


def _kin(callee: str, names: CodeNames) -> list[str]:
    """Classes the code does use that share the quoted class's first word ("Chat..." for
    ChatOpenAI), as "path:line: text"."""
    prefix = re.match(r"[A-Z][a-z0-9]+", callee)
    lines = sorted({f"{path}:{where}" for path, used in names.modules.items()
                    for name, where in used.items()
                    if prefix and name.rsplit(".", 1)[-1].startswith(prefix[0])})
    return lines[:MAX_QUOTED]


def quoted_misquotes(sentence: str, names: CodeNames, words: set[str]) -> list[Misquote]:
    """Each class the sentence's quoted code builds (``x = Name(key=...)``) that no tracked
    Python file of the repository names (`words`: their identifiers)."""
    if not words or _HEDGE.search(sentence):
        return []
    found = []
    for callee in sorted({m["callee"] for m in QUOTED_CALL.finditer(sentence)}):
        if callee in words:
            continue
        kin = _kin(callee, names)
        found.append(Misquote(
            f"{callee}(...)",
            f"The report quotes code building {callee}(...), a name no Python file of the "
            f"repository contains" + (f"; the code uses {'; '.join(kin)}." if kin else "."),
            kin or [f"{len(names.modules)} audited Python files: no '{callee}'"],
            {"callee": callee}))
    return found


def chat_class_misquotes(sentence: str, names: CodeNames, words: set[str]) -> list[Misquote]:
    """Each LangChain chat model class the sentence says the system uses that no tracked
    Python file names, when the code names another chat model class (a provider chosen at
    run time, ``init_chat_model``, names none and contradicts nothing)."""
    if not words or _HEDGE.search(sentence):
        return []
    found = []
    for callee in sorted({m["callee"] for m in CHAT_CLASS.finditer(sentence)}):
        kin = _kin(callee, names)
        if callee in words or not kin:
            continue
        found.append(Misquote(
            callee, f"The report says the system uses {callee}, a name no Python file of the "
                    f"repository contains; the code uses {'; '.join(kin)}.",
            kin, {"callee": callee}))
    return found


def method_misquotes(sentence: str, names: CodeNames, words: set[str]) -> list[Misquote]:
    """Each method the sentence says the code calls (``uses .with_structured_output()``)
    that no tracked Python file of the repository names (`words`: their identifiers)."""
    if not words or _HEDGE.search(sentence) or _ABSENT.search(sentence):
        return []
    return [Misquote(f"{callee}()", f"The report says the code calls {callee}(), a name no "
                                    "Python file of the repository contains.",
                     [f"{len(names.modules)} audited Python files: no '{callee}'"],
                     {"callee": callee})
            for callee in sorted({m["callee"] for m in METHOD_USE.finditer(sentence)} - words)]


def visitor_misquotes(sentence: str, names: CodeNames, words: set[str]) -> list[Misquote]:
    """The syntax tree said to be walked by a visitor (``ast.NodeVisitor``, "a visitor
    pattern") in a repository whose Python files name no NodeVisitor, NodeTransformer or
    ``visit_`` method anywhere, comments included."""
    if not words or _HEDGE.search(sentence) or _ABSENT.search(sentence) or (
            {"NodeVisitor", "NodeTransformer"} & words) or any(
            w.startswith("visit_") for w in words):
        return []
    return [Misquote("an AST visitor", "The report says the code walks the syntax tree with a "
                     "visitor; no Python file of the repository names NodeVisitor, "
                     "NodeTransformer or a visit_ method.",
                     [f"{len(names.modules)} audited Python files: no NodeVisitor, "
                      "NodeTransformer or visit_*"], {"callee": "NodeVisitor"})]


# A sentence that tells the reader what to do ("Concrete Action: Implement a fallback
# extractor using PyPDF ...") is a plan, whatever it names.
_IMPERATIVE = re.compile(r"^\W*(?:[\w &/-]{1,40}:\s*)?(?:implement|add|use|adopt|introduce|"
                         r"replace|switch|consider|integrate|build|create|move|try)\b",
                         re.IGNORECASE)
# The PDF libraries a report may name, by the modules that import them (PyPDF2 is pypdf's
# former name: either spelling names either).
PDF_LIBRARIES = {"docling": ("docling",), "pymupdf": ("fitz", "pymupdf"),
                 "pdfplumber": ("pdfplumber",), "pypdf": ("pypdf", "PyPDF2"),
                 "pypdf2": ("pypdf", "PyPDF2"), "pdfminer": ("pdfminer",)}


# A contrast or a denial hedges only its own clause: "Rather than dumping whole reports into
# context, we implemented an approach using Docling" still says the system uses Docling.
_CONTRAST = re.compile(r"\b(?:not|never|no\s+longer|instead|rather|replac\w*|migrat\w*|"
                       r"switch\w*)\b|n't\b", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[,;:()]")


def _uses(names: CodeNames) -> list[tuple[str, str]]:
    """Every module name the code uses with where, ``(name, "path:line: text")``, by path
    then name."""
    return [(name, f"{path}:{where}") for path, used in sorted(names.modules.items())
            for name, where in sorted(used.items())]


def _clause_around(sentence: str, start: int) -> str:
    """The clause of `sentence` around position `start` (between commas, semicolons,
    colons and brackets)."""
    left = max((m.end() for m in _CLAUSE_END.finditer(sentence, 0, start)), default=0)
    right = next((m.start() for m in _CLAUSE_END.finditer(sentence, start)), len(sentence))
    return sentence[left:right]


def library_misquotes(sentence: str, names: CodeNames, _words: set[str]) -> list[Misquote]:
    """Each PDF library the sentence says the system uses that no audited Python file
    imports, when the code reads PDFs with another one (a library used through a helper
    elsewhere, or no PDF code at all, contradicts nothing)."""
    if not names.modules or _IMPERATIVE.search(sentence) \
            or _HEDGE.search(_CONTRAST.sub(" ", sentence)):
        return []  # a plan or an example, anywhere in the sentence
    used: dict[str, str] = {}  # module -> its first use, "path:line: text"
    for name, where in _uses(names):
        used.setdefault(name.split(".")[0], where)
    found = []
    said = {m["lib"] for m in LIBRARY_USE.finditer(sentence)
            if not _CONTRAST.search(_clause_around(sentence, m.start("lib")))}
    for lib in sorted(said):
        modules = PDF_LIBRARIES[lib.lower()]
        kin = sorted(used[m] for other, ms in PDF_LIBRARIES.items() if ms != modules
                     for m in ms if m in used)
        if any(m in used for m in modules) or not kin:
            continue
        found.append(Misquote(
            lib, f"The report says the system uses {lib}; no Python file imports "
                 f"{' or '.join(modules)}, and the code reads PDFs with {'; '.join(kin)}.",
            kin[:MAX_QUOTED], {"library": lib}))
    return found


# What the system looks for in audited code ("flags os.system calls") is no use of it.
_DETECTS = re.compile(r"\b(?:detect\w*|flag\w*|scan\w*|search\w*|look\w*\s+for|check\w*|"
                      r"bans?|forbid\w*|prohibit\w*|avoid\w*|unsafe|dangerous|vulnerab\w*|"
                      r"inject\w*|target)\b", re.IGNORECASE)
# A name denied or set against the system in its own clause ("subprocess.run with list args,
# no os.system"; "the rubric favors tempfile.TemporaryDirectory") is not said to be used.
_NEGATED = re.compile(r"\b(?:no|not|never|without|instead|rather|avoid\w*|rubric|favou?rs?|"
                      r"requir\w*|expect\w*|recommend\w*)\b|n't\b", re.IGNORECASE)
_FILE_EXT = frozenset({"py", "md", "json", "pdf", "txt", "yaml", "yml", "toml", "ini", "cfg",
                       "png", "svg", "csv", "html", "js", "ts", "sh", "lock", "env", "ipynb"})


def module_misquotes(sentence: str, names: CodeNames, _words: set[str]) -> list[Misquote]:
    """Each `module.name` the sentence says the system uses that no audited Python file
    calls, while some file uses other names of that module ("tempfile.TemporaryDirectory is
    used to clone" over code that calls only tempfile.mkdtemp)."""
    if not names.modules or _HEDGE.search(sentence) or _IMPERATIVE.search(sentence) \
            or _DETECTS.search(sentence) or API_USE.search(sentence):
        return []  # a sentence that names the file is `api_misquotes`' to check
    uses: dict[str, list[str]] = {}  # name -> "path:line: text" of its uses
    for name, where in _uses(names):
        uses.setdefault(name, []).append(where)
    found = []
    said = {m["api"] or m["api2"] for m in MODULE_API.finditer(sentence)}
    for api in sorted(a for a in said if not _NEGATED.search(
            _clause_around(sentence, sentence.index(a)))):
        module, _, attr = api.partition(".")
        kin = sorted(w for name, ws in uses.items() if name.split(".")[0] == module for w in ws)
        if attr.lower() in _FILE_EXT or not kin \
                or any(n == api or n.startswith(api + ".") for n in uses):
            continue
        found.append(Misquote(
            api, f"The report says the system uses {api}; no Python file calls it, and the "
                 f"code uses {module} as {'; '.join(kin[:MAX_QUOTED])}.",
            kin[:MAX_QUOTED], {"api": api}))
    return found


USAGE_KINDS = ("api_use", "quoted_call", "chat_class", "method_use", "library_use",
               "module_api", "ast_visitor")


def usage_misquotes(kind: str, sentence: str, names: CodeNames,
                    words: set[str]) -> list[Misquote]:
    """What a statement of one of the `USAGE_KINDS` about the code's calls gets wrong."""
    if kind == "api_use":
        return api_misquotes(sentence, names)
    check = {"quoted_call": quoted_misquotes, "chat_class": chat_class_misquotes,
             "method_use": method_misquotes, "library_use": library_misquotes,
             "module_api": module_misquotes, "ast_visitor": visitor_misquotes}[kind]
    return check(sentence, names, words)
