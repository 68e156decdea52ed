"""Whether a value parsed by ``json.loads`` is a model's reply text.

A ``.content`` is a model's free text only when it is read on a reply: the value a model
call returned in this function (``reply = llm.invoke(msgs); reply.content``,
``(await self.llm.ainvoke(m)).content``, ``client.chat.completions.create(...)
.choices[0].message.content``), followed through local assignments, subscripts and
attributes. A model call is a model method (``invoke``, ``ainvoke``, ``create``...) on a
receiver the call facts take for a model (named like one, or built by a model class, a
``with_structured_output``/``bind_tools`` binding or a ``prompt | llm`` chain), or a call of
such an object. Any other ``.content`` (a Pydantic ``Evidence.content`` read from the
state, a file's content) is no model output.
"""

from __future__ import annotations

import ast
import re

from automaton_auditor.forensics.code.common import dotted, own_call_name, resolve
from automaton_auditor.forensics.code.recorder import CallRecorder, Ctx

LLM_METHODS = {"invoke", "ainvoke", "batch", "abatch", "stream", "astream"}
LLM_RECEIVER = re.compile(r"llm|model|chat|chain|structured|judge|client|runnable", re.I)
LLM_PACKAGES = ("langchain_openai", "langchain_anthropic", "langchain_google",
                "langchain_ollama", "langchain_groq", "langchain_mistralai", "openai",
                "langchain.chat_models", "langchain_community.chat_models", "anthropic")
# A provider SDK's chat call, with the receivers it is called on: OpenAI's
# ``client.chat.completions.create`` and ``client.responses.create``, Anthropic's
# ``client.messages.create``. It is a model call as ``llm.invoke`` is (`classify`).
SDK_CHAT: dict[str, tuple[str, ...]] = {
    "create": ("completions", "messages", "responses"),
    "acreate": ("completions", "messages", "responses")}
# A model provider's own SDK reply methods, each with the receivers it is called on (none
# named: any): the chat calls and Gemini's ``client.models.generate_content``.
SDK_REPLIES: dict[str, tuple[str, ...]] = {
    **SDK_CHAT, "generate_content": (), "generate_content_async": ()}
# the SDKs' own reply methods beside LangChain's (and its older ``predict``/``generate``)
REPLY_METHODS = LLM_METHODS | set(SDK_REPLIES) | {"predict", "apredict", "generate",
                                                  "agenerate"}
BINDINGS = {"with_structured_output", "bind_tools", "bind", "with_retry", "with_config"}
MAX_DEPTH = 8  # names followed to their values
# builtins: what they are handed is no reply a helper of the repository may parse
NOT_HELPERS = frozenset({"len", "str", "print", "isinstance", "getattr", "hasattr", "repr",
                         "bool", "int", "float", "list", "dict", "set", "tuple", "max", "min"})
MAX_NEST = 40  # parts of expressions gone into (a long concatenation)
MAX_BINDINGS = 4  # values a local may hold at a read, latest first (an if/else assigns two)


Within = dict[str, ast.expr]  # name -> the value of it being read (``x = x.strip()``)


def _value(col: CallRecorder, name: str, ctx: Ctx, within: Within) -> ast.expr | None:
    """What the local `name` holds where it is read: its last value, or inside that value
    (``text = text.strip()``) the one before."""
    return col.bound(name, ctx, within.get(name))


def from_content(col: CallRecorder, node: ast.expr, ctx: Ctx, depth: int = 0,
                 within: Within | None = None, nest: int = 0) -> bool:
    """Whether a value is taken from a model reply's ``.content`` (or ``["content"]``) in
    this function: through local assignments, method calls on it (``.strip()``,
    ``.group(1)``), calls given it (``re.search(pattern, text)``), slices and
    concatenations. So ``json_str = re.search(pattern, response.content).group(0);
    json.loads(json_str)`` parses the model's free text like ``json.loads(response.content)``
    does."""
    if depth > MAX_DEPTH or nest > MAX_NEST:
        return False
    within = within or {}
    if isinstance(node, ast.Attribute):
        # the reply is searched with a depth of its own: the text may have come a long way
        return (node.attr == "content" and _reply(col, node.value, ctx, 0, within)) \
            or from_content(col, node.value, ctx, depth, within, nest + 1)
    if isinstance(node, ast.Subscript):
        return (isinstance(node.slice, ast.Constant) and node.slice.value == "content"
                and _reply(col, node.value, ctx, 0, within)) \
            or from_content(col, node.value, ctx, depth, within, nest + 1)
    if isinstance(node, ast.Name):  # any value it may hold here: ``text = reply.content``
        value = _value(col, node.id, ctx, within)  # in an ``if``, ``str(reply)`` in its else
        for _binding in range(MAX_BINDINGS):
            if value is None or value is node:
                return False
            if from_content(col, value, ctx, depth + 1, {**within, node.id: value}, nest + 1):
                return True
            value = col.bound(node.id, ctx, value)
        return False
    if isinstance(node, ast.Call) and dotted(node.func) == "getattr" and \
            len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and \
            node.args[1].value == "content":  # ``getattr(response, "content", None)``
        return _reply(col, node.args[0], ctx, 0, within)
    if isinstance(node, ast.Call):
        parts = [*node.args, *(k.value for k in node.keywords)]
        if isinstance(node.func, ast.Attribute):
            parts.append(node.func.value)
        return any(from_content(col, p, ctx, depth, within, nest + 1) for p in parts)
    if isinstance(node, ast.BinOp | ast.BoolOp | ast.IfExp | ast.JoinedStr | ast.FormattedValue):
        return any(from_content(col, p, ctx, depth, within, nest + 1)
                   for p in ast.iter_child_nodes(node) if isinstance(p, ast.expr))
    return False


def _reply(col: CallRecorder, node: ast.expr, ctx: Ctx, depth: int, within: Within) -> bool:
    """Whether `node` is (a part of) what a model call returned: ``reply``,
    ``reply.choices[0].message``, ``result["messages"][-1]``."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(node, ast.Await):
        return _reply(col, node.value, ctx, depth, within)
    if isinstance(node, ast.Attribute | ast.Subscript):
        return _reply(col, node.value, ctx, depth, within)
    if isinstance(node, ast.Name):
        value = _value(col, node.id, ctx, within)
        return value is not None and value is not node and _reply(
            col, value, ctx, depth + 1, {**within, node.id: value})
    if not isinstance(node, ast.Call):
        return False
    if isinstance(node.func, ast.Attribute) and node.func.attr in REPLY_METHODS:
        return _model(col, node.func.value, ctx, depth + 1)
    # ``llm(messages)``: a local built as a model (a function named ``get_chat`` is none)
    return _model(col, node.func, ctx, depth + 1, named=False)


def _model(col: CallRecorder, node: ast.expr, ctx: Ctx, depth: int,
           named: bool = True) -> bool:
    """Whether `node` is a model: named like one (`named`), or a local built as one."""
    if depth > MAX_DEPTH:
        return False
    name = dotted(node) or ""
    if named and name and LLM_RECEIVER.search(name):
        return True
    if isinstance(node, ast.Name):
        value = col.bound(node.id, ctx)
        return value is not None and value is not node and _model(col, value, ctx, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # ``prompt | llm``
        return _model(col, node.right, ctx, depth + 1)
    if not isinstance(node, ast.Call):
        return False
    full = resolve(dotted(node.func), col.imports) or ""
    if full.startswith(LLM_PACKAGES):
        return True
    return isinstance(node.func, ast.Attribute) and node.func.attr in BINDINGS and \
        _model(col, node.func.value, ctx, depth + 1)


def content_args(col: CallRecorder, node: ast.Call, ctx: Ctx) -> list[int]:
    """The positions of a model reply's text among the arguments of a call of a repository
    helper (a plain name, or ``self.x``): the helper may parse it (`helper_parse`)."""
    name = own_call_name(node.func).rsplit(".", 1)[-1]
    if not name or name in NOT_HELPERS or not 0 < len(node.args) <= 6:
        return []
    return [i for i, a in enumerate(node.args) if from_content(col, a, ctx)]
