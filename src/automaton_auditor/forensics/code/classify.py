"""Classifying one call node into the facts the findings need."""

from __future__ import annotations

import ast
import re

from automaton_auditor.forensics.code.common import dotted, keyword, resolve, str_value, unparse
from automaton_auditor.forensics.code.recorder import CallRecorder, Ctx

SUBPROCESS = {"run", "call", "check_call", "check_output", "Popen", "getoutput",
              "getstatusoutput"}
LLM_METHODS = {"invoke", "ainvoke", "batch", "abatch", "stream", "astream"}
LLM_RECEIVER = re.compile(r"llm|model|chat|chain|structured|judge|client|runnable", re.I)
LLM_PACKAGES = ("langchain_openai", "langchain_anthropic", "langchain_google",
                "langchain_ollama", "langchain_groq", "langchain_mistralai", "openai",
                "langchain.chat_models", "langchain_community.chat_models", "anthropic")


def classify_call(col: CallRecorder, node: ast.Call, ctx: Ctx, name: str, full: str,
                  tail: str, attr: str) -> None:
    """Record the fact(s) a call establishes, if any."""
    if full in ("os.system", "os.popen") or full.startswith("os.spawn") or \
            full.startswith("os.exec"):
        _process(col, node, ctx, full, via_shell=True)
    elif full.startswith("subprocess.") and tail in SUBPROCESS:
        _process(col, node, ctx, full, via_shell=col.shell(node) or tail in ("getoutput",
                                                                          "getstatusoutput"))
    elif full in ("eval", "exec") and name == full:
        arg = node.args[0] if node.args else None
        col.add("eval_exec", node, ctx, name=full, literal=col.literal(arg, ctx),
                 in_try=ctx.in_try)
    elif tail in ("TemporaryDirectory", "mkdtemp") and full.startswith("tempfile"):
        col.add("tempdir", node, ctx, name=tail)
    elif attr == "clone_from" or tail == "clone_from":
        col.add("clone", node, ctx, how="GitPython clone_from", tempdir=ctx.tempdir,
                 in_try=ctx.in_try, timeout=keyword(node, "timeout") is not None)
    elif attr in ("with_structured_output", "bind_tools"):
        _structured(col, node, ctx, attr)
    elif attr == "with_retry" or (keyword(node, "max_retries") is not None and
                                  (tail.startswith("Chat") or attr == "with_structured_output")):
        col.add("retry", node, ctx, how=attr or tail)
    elif col.is_send(node):
        _send(col, node, ctx)
    elif tail == "Command" and keyword(node, "goto") is not None:
        _goto(col, node, ctx)
    elif "git" in name.lower() and _has_clone_literal(node):
        # a project wrapper such as ``run_git_command(["clone", url, dest])``
        col.add("clone", node, ctx, how=name, tempdir=ctx.tempdir, in_try=ctx.in_try,
                 timeout=keyword(node, "timeout") is not None)
    else:
        _llm(col, node, ctx, full, tail, attr)
    if ctx.tempdir and name:
        # A helper called inside ``with TemporaryDirectory()`` (e.g. clone_repo(url, tmp))
        # runs in the sandbox; the clone finding follows the call by the helper's name.
        col.add("in_tempdir", node, ctx, callee=name.rsplit(".", 1)[-1])


def _process(col: CallRecorder, node: ast.Call, ctx: Ctx, full: str, via_shell: bool) -> None:
    arg = col.first_arg(node, ctx)
    literal = col.literal(arg, ctx)
    # every literal piece of the command, also inside "git clone " + url and f-strings
    text = " ".join(n.value for n in (ast.walk(arg) if arg is not None else [])
                    if isinstance(n, ast.Constant) and isinstance(n.value, str))
    is_clone = "clone" in text.split() or "clone" in text
    col.add("process", node, ctx, name=full, shell=via_shell, literal=literal,
             timeout=keyword(node, "timeout") is not None,
             check=keyword(node, "check") is not None,
             capture=any(keyword(node, k) is not None for k in
                         ("capture_output", "stdout", "stderr")),
             in_try=ctx.in_try, tempdir=ctx.tempdir, clone=is_clone and "git" in text)
    if is_clone and "git" in text:
        col.add("clone", node, ctx, how=full, tempdir=ctx.tempdir, in_try=ctx.in_try,
                 timeout=keyword(node, "timeout") is not None, shell=via_shell, literal=literal)


def _has_clone_literal(node: ast.Call) -> bool:
    return any(str_value(e) == "clone" for arg in node.args[:2] for e in _elements(arg))


def _elements(arg: ast.expr | None) -> list[ast.expr]:
    if arg is None:
        return []
    if isinstance(arg, ast.List | ast.Tuple):
        return list(arg.elts)
    return [arg]


def _structured(col: CallRecorder, node: ast.Call, ctx: Ctx, attr: str) -> None:
    schemas: list[str] = []
    defaults = (col.functions.get(ctx.func) or {}).get("defaults") or {}
    for arg in node.args[:1]:
        items = arg.elts if isinstance(arg, ast.List | ast.Tuple) else [arg]
        # ``def call(llm, schema=JudicialOpinion): llm.with_structured_output(schema)``
        schemas += [defaults.get(str(dotted(i))) or resolve(dotted(i), col.imports)
                    or unparse(i, 80) for i in items]
    schema_kw = keyword(node, "schema") or keyword(node, "tools")
    if schema_kw is not None:
        schemas.append(resolve(dotted(schema_kw), col.imports) or unparse(schema_kw, 80))
    col.add("structured", node, ctx, how=attr, schemas=schemas,
             receiver=dotted(node.func.value) if isinstance(node.func, ast.Attribute) else None)


def _send(col: CallRecorder, node: ast.Call, ctx: Ctx) -> None:
    target = node.args[0] if node.args else keyword(node, "node")
    value = str_value(target) if target is not None else None
    ref = dotted(target) if target is not None else None
    col.add("send", node, ctx, target=value, ref=ref)
    facts = col.functions.get(ctx.func)
    if facts is not None:
        facts["sends"].append(value if value is not None else {"ref": ref})


def _goto(col: CallRecorder, node: ast.Call, ctx: Ctx) -> None:
    goto = keyword(node, "goto")
    items = goto.elts if isinstance(goto, ast.List | ast.Tuple) else [goto]
    facts = col.functions.get(ctx.func)
    for item in items:
        value = str_value(item)
        if facts is not None and value is not None:
            facts["gotos"].append(value)
    col.add("goto", node, ctx)


def _llm(col: CallRecorder, node: ast.Call, ctx: Ctx, full: str, tail: str,
         attr: str) -> None:
    receiver = dotted(node.func.value) if isinstance(node.func, ast.Attribute) else ""
    if attr in LLM_METHODS and receiver and LLM_RECEIVER.search(receiver.rsplit(".", 1)[-1]):
        col.add("llm_invoke", node, ctx, receiver=receiver, in_try=ctx.in_try,
                 in_loop=ctx.in_loop)
        scope = col.idents.get(ctx.func)
        if scope is not None:
            scope["llm"].append(node.lineno)
    elif full.startswith(LLM_PACKAGES) and tail[:1].isupper():
        col.add("llm_ctor", node, ctx, name=full)
        scope = col.idents.get(ctx.func)
        if scope is not None:
            scope["llm"].append(node.lineno)
    elif attr in ("model_validate", "model_validate_json", "parse_obj", "parse_raw"):
        col.add("validate", node, ctx, name=dotted(node.func))
    elif full == "json.loads" and node.args and "content" in unparse(node.args[0], 200):
        col.add("freeform_parse", node, ctx, in_try=ctx.in_try)
