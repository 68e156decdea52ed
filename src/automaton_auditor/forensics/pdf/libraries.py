"""Libraries a report may say the system is built on, by the job they do, and the sentences
that say so (`LIBRARY_USE`); `forensics.usage.library_misquotes` reads them against the names
the code uses.

A library is said to be used when a verb of use leads to it ("ingestion using Docling",
"parsing via Python's ast module", "judges via langchain-openai"), when a role label names it
("Embeddings: Sentence-transformers all-MiniLM-L6-v2 ..."), or when it is the subject of the
work ("Sentence-transformers ... provides fast, local semantic search").
"""

from __future__ import annotations

import re

# LangChain packages that bring a chat model class, by their distribution's name.
_PROVIDERS = (r"openai|anthropic|google[-_]genai|google[-_]vertexai|groq|ollama|mistralai|"
              r"openrouter|deepseek|aws|cohere|together|fireworks|huggingface|xai|litellm")
_NAMES = (r"Docling|PyMuPDF|pdfplumber|pypdf|PyPDF2|pdfminer|tree[\s-]sitter|libcst|"
          r"sentence[\s-]transformers|langchain[-_](?:" + _PROVIDERS + r")|"
          r"Python['\u2019]s\s+(?-i:ast)(?!\s*\()|(?-i:ast|AST)\s+module")
_USE = (r"\b(?:via|uses?|using|with|through|built\s+on|backed\s+by|powered\s+by|relies\s+on|"
        r"leverag\w*)\b[^.;]{0,40}?\b")
# A role label ("Embeddings: ...", "PDF parsing: ...") and a library doing the work.
_ROLE = (r"\b(?:embeddings?|embedding\s+model|parser|parsing|pdf\s+(?:parsing|ingestion|"
         r"extraction|reader)|llm|llm\s+provider|provider)\s*:\s*")
_DOES = (r"(?:\s+[\w./-]+){0,2}?\s+(?:provides|powers|handles|generates|computes|produces|"
         r"performs|parses|extracts|embeds)\b")
LIBRARY_USE = re.compile(
    rf"{_USE}(?P<lib>{_NAMES})\b|{_ROLE}(?P<lib2>{_NAMES})\b|"
    rf"\b(?P<lib3>{_NAMES})\b(?={_DOES})", re.IGNORECASE)


def library_key(said: str) -> str:
    """The one spelling of a library the report names: lower case, words joined by a
    hyphen ("Tree sitter" -> "tree-sitter", "langchain_openai" -> "langchain-openai"), and
    Python's syntax tree module as "ast"."""
    key = re.sub(r"[\s_]+", "-", said.strip().lower())
    return "ast" if re.search(r"\bast\b", key) else key


def said_libraries(sentence: str) -> list[tuple[str, int]]:
    """Each library the sentence says is used, as (what it wrote, where it starts)."""
    found = []
    for match in LIBRARY_USE.finditer(sentence):
        group = next(g for g in ("lib", "lib2", "lib3") if match[g])
        found.append((match[group], match.start(group)))
    return found


# The project said to be tested ("pytest + coverage setup; unit tests for tools and state
# models", "a test suite covers the tools"): the repository must hold a test file.
TESTS_CLAIM = re.compile(
    r"\b(?:unit|integration)\s+tests?\s+(?:for|cover\w*|of|on)\b|\btest\s+suite\s+(?:covers?|"
    r"for|with|of)\b|\bpytest\s*(?:\+|and|with)\s*coverage\b|\b(?:unit\s+)?tests\s+(?:are|is)\s+"
    r"(?:written|in\s+place|passing)\b", re.IGNORECASE)
# The package manager the project is said to use, by the lock file it writes.
MANAGERS = {"Poetry": "poetry.lock", "Pipenv": "Pipfile.lock", "PDM": "pdm.lock",
            "uv": "uv.lock"}
MANAGER_CLAIM = re.compile(
    r"\b(?P<tool>(?i:poetry|pipenv|pdm)|uv)\s+(?i:environment|project|setup|managed|"
    r"workspace|lock\w*|install|sync|for\s+dependency|to\s+manage)\b"
    r"|\b(?i:managed|uses?|using|with|via|through)\s+(?:\w+\s+){0,2}?"
    r"(?P<tool2>(?i:poetry|pipenv|pdm)|uv)\b(?!\s*\()")

# The Chief Justice said to let the evidence overrule the judges (`forensics.synthesis_claims`):
# the rule named, or told ("forensic data overrules judge interpretation").
FACT_SUPREMACY = re.compile(
    r"\bfact[\s-]+supremacy\b|\b(?:forensic\s+)?(?:facts?|evidence|forensic\s+(?:data|facts?))"
    r"\s+(?:always\s+)?(?:overrules?|overrides?|trumps?|outweighs?)\s+(?:the\s+)?(?:judges?|"
    r"judicial|opinions?|interpretations?)", re.IGNORECASE)
