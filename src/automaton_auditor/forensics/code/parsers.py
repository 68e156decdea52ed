"""Model replies validated by a schema output parser: the facts of ``llm.schema_parse``.

LangChain's ``PydanticOutputParser(pydantic_object=Opinion)`` (and ``JsonOutputParser`` or
``PydanticToolsParser`` given a schema) validates a reply against a Pydantic model and raises
when it does not fit. Applied to a model's reply, by ``parser.parse(reply.content)`` or as a
link of ``prompt | llm | parser``, it is schema validation without a bound call: partial
enforcement. A parser that is built but never applied (only its format instructions used)
validates nothing and gives no fact. The walk follows the parser through one binding, a
local or module name or an attribute (``self.parser = PydanticOutputParser(...)``). A chain
ending in a schemaless ``JsonOutputParser`` whose answer the same function hands to
``Model.model_validate`` (``parse_obj``, ``Model(**item)``), item by item or whole, is
validated against ``Model`` too.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from automaton_auditor.forensics.code.common import (
    JSON,
    dotted,
    keyword,
    qualified,
    resolve,
    snippet,
)

# parsers that validate against the schema they are given (a JsonOutputParser without
# ``pydantic_object`` only loads JSON, so a schema argument is required of every one)
SCHEMA_PARSERS = ("PydanticOutputParser", "JsonOutputParser", "PydanticToolsParser",
                  "PydanticOutputFunctionsParser", "JsonOutputKeyToolsParser")
PARSE_METHODS = ("parse", "aparse", "parse_result", "aparse_result", "invoke", "ainvoke")


class Where(NamedTuple):
    """A node and the qualified name of the function it sits in (as `calls` names it)."""

    node: ast.AST
    func: str
    cls: str


def _schema(call: ast.Call, imports: dict[str, str]) -> str | None:
    """The schema a parser constructor is given, when the callee is a LangChain parser
    (``""``: a JSON parser given none, which validates only with `_validated`)."""
    full = resolve(dotted(call.func), imports) or ""
    if not full.startswith("langchain") or full.rsplit(".", 1)[-1] not in SCHEMA_PARSERS:
        return None
    arg = keyword(call, "pydantic_object") or keyword(call, "tools") or keyword(
        call, "pydantic_schema") or (call.args[0] if call.args else None)
    if arg is None:
        return "" if full.endswith(".JsonOutputParser") else None
    return resolve(dotted(arg), imports) or dotted(arg)


VALIDATORS = ("model_validate", "parse_obj", "model_validate_json", "parse_raw")


def _validated(func: ast.AST, chain: ast.BinOp) -> str | None:
    """The model a function validates a schemaless chain's answer with: ``parsed =
    chain.invoke(...)`` then ``Model.model_validate(op) for op in parsed`` (or ``Model(**x)``)."""
    body = list(ast.walk(func))
    chains = {dotted(t) for n in body if isinstance(n, ast.Assign) and n.value is chain
              for t in n.targets}
    answers: set[str | None] = set()
    for node in body:
        if not isinstance(node, ast.Assign):
            continue
        value = node.value.value if isinstance(node.value, ast.Await) else node.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
                value.func.attr in PARSE_METHODS and (value.func.value is chain or
                                                       dotted(value.func.value) in chains):
            answers |= {dotted(t) for t in node.targets}
    answers |= {dotted(c.target) for c in body if isinstance(c, ast.comprehension | ast.For)
                and dotted(c.iter) in answers}
    answers.discard(None)
    for node in body:
        if not isinstance(node, ast.Call):
            continue
        args = [*node.args, *(k.value for k in node.keywords if k.arg is None)]
        if not any(dotted(a.value if isinstance(a, ast.Subscript) else a) in answers
                   for a in args):
            continue
        if isinstance(node.func, ast.Attribute) and node.func.attr in VALIDATORS:
            return dotted(node.func.value)
        if node.keywords and node.keywords[0].arg is None and dotted(node.func):
            return dotted(node.func)  # ``Opinion(**item)``
    return None


def _walk(tree: ast.Module) -> list[Where]:
    """Every node with its enclosing function's qualified name, iteratively."""
    out: list[Where] = []
    stack = [Where(tree, "", "")]
    while stack:
        item = stack.pop()
        out.append(item)
        node, func, cls = item
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            func = qualified(func, cls, node.name)
        elif isinstance(node, ast.ClassDef):
            func, cls = "", node.name
        stack.extend(Where(child, func, cls) for child in ast.iter_child_nodes(node))
    return out


class Parser(NamedTuple):
    """A schema parser: the schema it validates against, and where it is built."""

    schema: str
    built: ast.AST


def _bindings(nodes: list[Where], imports: dict[str, str]) -> dict[str, Parser]:
    """Names (``parser``, ``self.parser``) bound to a schema parser."""
    bound: dict[str, Parser] = {}
    for where in nodes:
        node = where.node
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Call):
            schema = _schema(node.value, imports)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                name = dotted(target)
                if schema is not None and name:
                    bound[name] = Parser(schema, node)
    return bound


def _parser_of(node: ast.AST, bound: dict[str, Parser],
               imports: dict[str, str]) -> Parser | None:
    """The parser `node` is (a bound name or a constructor call), or None."""
    if isinstance(node, ast.Call):
        schema = _schema(node, imports)
        return Parser(schema, node) if schema is not None else None
    name = dotted(node)
    return bound.get(name) if name else None


def _applied(node: ast.AST, bound: dict[str, Parser],
             imports: dict[str, str]) -> Parser | None:
    """The schema a node applies: ``parser.parse(...)`` or a ``... | parser`` chain link."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in PARSE_METHODS:
        return _parser_of(node.func.value, bound, imports)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _parser_of(node.right, bound, imports)
    return None


def schema_parses(tree: ast.Module, imports: dict[str, str], lines: list[str]) -> list[JSON]:
    """``schema_parse`` call facts: where a schema parser is applied (see the module)."""
    nodes = _walk(tree)
    bound = _bindings(nodes, imports)
    if not bound and not any(isinstance(w.node, ast.Call) and
                             _schema(w.node, imports) is not None for w in nodes):
        return []
    found: list[JSON] = []
    # qualified name -> definition, named as `_walk` names the nodes inside it
    functions = {qualified(w.func, w.cls, w.node.name): w.node
                 for w in nodes if isinstance(w.node, ast.FunctionDef | ast.AsyncFunctionDef)}
    for node, func, _cls in nodes:
        parser = _applied(node, bound, imports)
        if parser is not None and not parser.schema:
            owner = functions.get(func)
            schema = _validated(owner, node) if owner is not None and \
                isinstance(node, ast.BinOp) else None
            parser = Parser(schema, parser.built) if schema else None
        if parser is None:
            continue
        line = getattr(node, "lineno", 1)
        built = getattr(parser.built, "lineno", line)
        # quote the line that builds the parser too, when it is another one
        text = snippet(lines, node) + ("" if built == line else
                                       f"  [parser, line {built}: {snippet(lines, parser.built)}]")
        found.append({"kind": "schema_parse", "line": line, "func": func, "snippet": text,
                      "schema": parser.schema})
    return sorted(found, key=lambda c: c["line"])
