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
"instead of") contradicts nothing, nor does a name a line wrap broke in two whose halves
joined are a name the code uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from automaton_auditor.forensics.pdf.claims import (
    API_USE,
    CHAT_CLASS,
    METHOD_USE,
    MODULE_API,
    QUOTED_CALL,
)
from automaton_auditor.forensics.pdf.libraries import library_key, said_libraries
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
# extractor using PyPDF ...") is a plan, whatever it names; a design record's "Decision: Use
# X" says what was chosen and built.
_IMPERATIVE = re.compile(r"^\W*(?:(?!decisions?\s*:)[\w &/-]{1,40}:\s*)?"
                         r"(?:implement|add|use|adopt|introduce|"
                         r"replace|switch|consider|integrate|build|create|move|try)\b",
                         re.IGNORECASE)
# What each library the report may name does, and the names of used code that show it used
# (module-qualified, `forensics.code.names`); PyPDF2 is pypdf's former name: either spelling
# names either. A LangChain chat provider package (langchain-openai) is read apart
# (`_provider_kin`).
_PDF = r"^(?:pypdf|PyPDF2)\b"
LIBRARIES: dict[str, tuple[str, str]] = {
    "docling": ("PDF", r"^docling\b"), "pymupdf": ("PDF", r"^(?:fitz|pymupdf)\b"),
    "pdfplumber": ("PDF", r"^pdfplumber\b"), "pypdf": ("PDF", _PDF), "pypdf2": ("PDF", _PDF),
    "pdfminer": ("PDF", r"^pdfminer\b"),
    "ast": ("source code", r"^ast\."), "tree-sitter": ("source code", r"^tree_sitter"),
    "libcst": ("source code", r"^libcst\."),
    # a HuggingFace embedding class runs sentence-transformers underneath
    "sentence-transformers": ("embeddings", r"^sentence_transformers\.|\.(?:HuggingFace|"
                              r"SentenceTransformer)\w*Embedding\w*$"),
    "other embeddings": ("embeddings", r"\.(?!HuggingFace|SentenceTransformer)\w*"
                         r"(?:Embeddings|EmbeddingFunction)$"),
}
_JOBS = {"PDF": "reads PDFs with", "source code": "parses source code with",
         "embeddings": "embeds text with", "chat model": "builds its chat model with"}
_CHAT_PACKAGE = re.compile(r"^(?P<package>langchain_[a-z_]+)\.(?:[\w.]+\.)?(?P<cls>Chat[A-Z]\w*)$")


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


def _denied(sentence: str, start: int) -> bool:
    """Whether the clause of the library at `start` sets it against the system: a denial or
    a replacement anywhere in it ("Docling is not used", "pypdf replaced Docling"), a
    contrast only before it ("rather than with Docling"; "ast instead of regex" uses ast)."""
    left = max((m.end() for m in _CLAUSE_END.finditer(sentence, 0, start)), default=0)
    return bool(_AGAINST.search(_clause_around(sentence, start))
                or _CONTRAST.search(sentence[left:start]))


# The contrast words that set aside what they follow as well as what they precede.
_AGAINST = re.compile(r"\b(?:not|never|no\s+longer|replac\w*|migrat\w*|switch\w*)\b|n't\b",
                      re.IGNORECASE)


def _library_kin(key: str, uses: list[tuple[str, str]]) -> list[str] | None:
    """Uses of other libraries doing the job of the library `key` ("path:line: text"); None
    when the code uses `key` itself, or picks its chat model at run time (`init_chat_model`,
    for a LangChain provider package)."""
    if key.startswith("langchain-"):
        package, provider = key.replace("-", "_"), key.split("-", 1)[1].replace("-", "")
        if any(n.startswith(package + ".") or n.endswith("init_chat_model") for n, _ in uses):
            return None
        return sorted({w for n, w in uses if (m := _CHAT_PACKAGE.match(n))
                       and m["package"] != package and provider not in m["cls"].lower()},
                      key=_by_line)
    kind, mine = LIBRARIES[key]
    if any(re.search(mine, n) for n, _ in uses):
        return None
    return sorted({w for n, w in uses for k, rx in LIBRARIES.values()
                   if k == kind and rx != mine and re.search(rx, n)}, key=_by_line)


def _by_line(where: str) -> tuple[str, int]:
    """A "path:line: text" use's path and line, to list uses in file order."""
    path, _, rest = where.partition(":")
    line = rest.split(":", 1)[0]
    return path, int(line) if line.isdigit() else 0


def library_misquotes(sentence: str, names: CodeNames, _words: set[str]) -> list[Misquote]:
    """Each library the sentence says the system uses (`pdf.libraries`: for PDFs, source
    code, embeddings, or a LangChain chat provider package) that no audited Python file
    uses, when the code does that job with another one (a library used through a helper
    elsewhere, or no code for that job at all, contradicts nothing; nor does a sentence that
    also names, as used, the library the code does use)."""
    if not names.modules or _IMPERATIVE.search(sentence) \
            or _HEDGE.search(_CONTRAST.sub(" ", sentence)):
        return []  # a plan or an example, anywhere in the sentence
    uses = _uses(names)
    said = {library_key(lib): lib for lib, at in said_libraries(sentence)
            if not _denied(sentence, at)}
    kins = {key: _library_kin(key, uses) for key in said}
    right = {LIBRARIES.get(key, ("chat model", ""))[0] for key, kin in kins.items() if kin is None}
    found = []
    for key, kin in sorted(kins.items()):
        kind = LIBRARIES.get(key, ("chat model", ""))[0]
        if not kin or kind in right:
            continue
        found.append(Misquote(
            said[key], f"The report says the system uses {said[key]}; no Python file imports "
                       f"{key.replace('-', '_')}, and the code {_JOBS[kind]} "
                       f"{'; '.join(kin[:MAX_QUOTED])}.",
            kin[:MAX_QUOTED], {"library": said[key]}))
    return found


# The names that show a library doing its job, for the libraries whose use can confirm a
# report (a type annotation `ast.AST` parses nothing; PyPDF2 is not pypdf).
_DOES_JOB = {"ast": r"^ast\.(?:parse|walk|NodeVisitor|NodeTransformer)$",
             "docling": r"^docling\.document_converter\.DocumentConverter$",
             "pymupdf": r"^(?:fitz|pymupdf)\.open$", "pypdf": r"^pypdf\.PdfReader$",
             "pypdf2": r"^PyPDF2\.PdfReader$", "pdfplumber": r"^pdfplumber\.open$"}


def library_confirmations(sentence: str, names: CodeNames) -> list[tuple[str, list[str]]]:
    """Each library the sentence says the system uses that the audited code does use for
    that job (`_DOES_JOB`'s libraries only), with the lines that show it ("path:line:
    text"); empty for a plan, a hedge or a denial (as `library_misquotes` reads them)."""
    if not names.modules or _IMPERATIVE.search(sentence) \
            or _HEDGE.search(_CONTRAST.sub(" ", sentence)):
        return []
    uses = _uses(names)
    said = {library_key(lib): lib for lib, at in said_libraries(sentence)
            if not _denied(sentence, at)}
    found = []
    for key, lib in sorted(said.items()):
        job = _DOES_JOB.get(key)
        lines = sorted({w for n, w in uses if job and re.search(job, n)}, key=_by_line)
        if lines:
            found.append((lib, lines[:MAX_QUOTED]))
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


def _own_module(api: str, names: CodeNames) -> bool:
    """`api` names one of the repository's own modules (``python -m src.graph`` runs
    src/graph.py), not a function of a module."""
    path = api.replace(".", "/")
    return f"{path}.py" in names.modules or f"{path}/__init__.py" in names.modules


def module_misquotes(sentence: str, names: CodeNames, _words: set[str]) -> list[Misquote]:
    """Each `module.name` the sentence says the system uses that no audited Python file
    calls, while some file uses other names of that module ("tempfile.TemporaryDirectory is
    used to clone" over code that calls only tempfile.mkdtemp)."""
    if not names.modules or _IMPERATIVE.search(sentence) \
            or _DETECTS.search(sentence) or API_USE.search(sentence):
        return []  # a sentence that names the file is `api_misquotes`' to check
    uses: dict[str, list[str]] = {}  # name -> "path:line: text" of its uses
    for name, where in _uses(names):
        uses.setdefault(name, []).append(where)
    found = []
    said = {m["api"] or m["api2"] for m in MODULE_API.finditer(sentence)}
    # hedged up to the end of the name's clause ("We will switch to ..."); what a later
    # clause adds ("..., ensuring code is never dropped into the working directory") is not
    for api in sorted(a for a in said if not _NEGATED.search(
            _clause_around(sentence, sentence.index(a))) and not _HEDGE.search(
            sentence[: sentence.index(a)] + _clause_around(sentence, sentence.index(a)))):
        module, _, attr = api.partition(".")
        kin = sorted(w for name, ws in uses.items() if name.split(".")[0] == module for w in ws)
        if attr.lower() in _FILE_EXT or not kin or _wrapped(sentence, api, uses) \
                or any(n == api or n.startswith(api + ".") for n in uses) \
                or _own_module(api, names):
            continue
        found.append(Misquote(
            api, f"The report says the system uses {api}; no Python file calls it, and the "
                 f"code uses {module} as {'; '.join(kin[:MAX_QUOTED])}.",
            kin[:MAX_QUOTED], {"api": api}))
    return found


def _wrapped(sentence: str, api: str, uses: dict[str, list[str]]) -> bool:
    """Whether `api` is the head of a name a line or table-cell wrap broke in two
    ("tempfile.TemporaryDire ctory()"): joined to the word after it, it is a name the code
    uses. Only a join the code confirms is made."""
    tail = re.match(r"\s+([A-Za-z_]\w*)", sentence[sentence.index(api) + len(api):])
    return tail is not None and f"{api}{tail[1]}" in uses


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
