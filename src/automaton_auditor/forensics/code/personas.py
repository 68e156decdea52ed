"""Persona prompts, wherever they live (string constants, prompt files, YAML/JSON),
and how much text they share (above 50 %: persona collusion)."""

from __future__ import annotations

import json
import re
from difflib import SequenceMatcher
from itertools import combinations
from pathlib import Path
from typing import Any

from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.state import Finding

PERSONAS = {"Prosecutor": re.compile(r"prosecut", re.I),
            "Defense": re.compile(r"defen[cs]e", re.I),
            "TechLead": re.compile(r"tech[\s_-]?lead", re.I)}
TONE = {"Prosecutor": re.compile(r"gap|flaw|secur|lazy|laziness|strict|critic|advers|skeptic|"
                                 r"harsh|penal", re.I),
        "Defense": re.compile(r"effort|intent|creativ|generous|reward|credit|forgiv|spirit",
                              re.I),
        "TechLead": re.compile(r"architect|maintainab|practical|pragmatic|viab|sound", re.I)}
PROMPT_FILE = re.compile(r"\.(md|txt|ya?ml|json|j2|jinja2?|prompt|toml)$", re.I)
PROMPT_PATH = re.compile(r"prompt|persona|judge|prosecut|defen[cs]e|tech[_-]?lead", re.I)
COLLUSION = 0.5
MAX_PROMPT_FILE = 200_000


def _persona_of(name: str, text: str) -> str | None:
    for persona, pattern in PERSONAS.items():
        if pattern.search(name):
            return persona
    hits = {p: m.start() for p, pat in PERSONAS.items() if (m := pat.search(text[:400]))}
    if len(hits) == 1:
        return next(iter(hits))
    return None


def _candidates(repo: Path, files: list[str], facts: dict[str, JSON]) -> list[JSON]:
    found: list[JSON] = []
    for path in sorted(facts):
        for item in facts[path].get("strings") or []:
            label = f"{item['func']}.{item['var']}" if item["var"] else item["func"]
            found.append({"loc": f"{path}:{item['line']}", "name": label,
                          "text": item["text"]})
    for path in files:
        if PROMPT_FILE.search(path) and PROMPT_PATH.search(path) and \
                not path.lower().startswith(("docs/", "reports/", "audit/")):
            found += _file_prompts(repo, path)
    return found


def _file_prompts(repo: Path, path: str) -> list[JSON]:
    target = repo / path
    try:
        if target.is_symlink() or target.stat().st_size > MAX_PROMPT_FILE:
            return []
        text = target.read_text("utf-8", errors="replace")
    except OSError:
        return []
    data: Any = None
    if path.endswith((".yaml", ".yml")):
        import yaml  # type: ignore[import-untyped]

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:
            data = None
    elif path.endswith(".json"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
    if isinstance(data, dict):
        return [{"loc": f"{path}:{_line_of(text, key)}", "name": f"{path}:{key}",
                 "text": _flatten(value)} for key, value in data.items()]
    return [{"loc": f"{path}:1", "name": path, "text": text}]


def _line_of(text: str, key: Any) -> int:
    index = text.find(str(key))
    return text.count("\n", 0, index) + 1 if index >= 0 else 1


def _flatten(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(_flatten(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(_flatten(v) for v in value)
    return ""


def overlap(a: str, b: str) -> float:
    """Share of text two prompts have in common (word-level matching, 0-1)."""
    wa, wb = a.lower().split(), b.lower().split()
    if not wa or not wb:
        return 0.0
    return SequenceMatcher(None, wa, wb, autojunk=False).ratio()


def _pick(candidates: list[JSON]) -> dict[str, JSON]:
    chosen: dict[str, JSON] = {}
    for item in candidates:
        persona = _persona_of(item["name"], item["text"])
        if persona and len(item["text"]) > len(chosen.get(persona, {}).get("text", "")):
            chosen[persona] = item
    return {p: chosen[p] for p in PERSONAS if p in chosen}


def persona_findings(repo: Path, files: list[str], facts: dict[str, JSON]) -> list[Finding]:
    """``judges.personas``, ``judges.collusion`` and ``judges.persona_tone``."""
    chosen = _pick(_candidates(repo, files, facts))
    pairs = {f"{a}/{b}": round(overlap(chosen[a]["text"], chosen[b]["text"]), 3)
             for a, b in combinations(chosen, 2)}
    colluding = {k: v for k, v in pairs.items() if v > COLLUSION}
    quote = "\n\n".join(f"[{p}] {i['loc']}:\n{i['text'][:500]}" for p, i in chosen.items())
    loc = next(iter(chosen.values()))["loc"] if chosen else "."
    tone = {p: bool(TONE[p].search(i["text"])) for p, i in chosen.items()}
    where = {p: i["loc"] for p, i in chosen.items()}
    return [
        Finding(facet="judges.personas", goal="Distinct Prosecutor, Defense and TechLead "
                "persona prompts exist", found=len(chosen) == 3, pattern="success",
                location=loc, content=quote or None, confidence=0.8,
                rationale=f"Persona prompts found for: {', '.join(chosen) or 'none'}.",
                data={"locations": where}),
        Finding(facet="judges.collusion", goal="Persona prompts share more than 50% of text",
                found=bool(colluding), pattern="failure", location=loc, content=quote or None,
                confidence=0.8 if len(chosen) >= 2 else 0.4,
                rationale=(f"Pairwise shared text: {pairs}." if pairs else
                           "Fewer than two persona prompts to compare."),
                data={"overlap": pairs, "threshold": COLLUSION}),
        Finding(facet="judges.persona_tone", goal="Prosecutor is adversarial, Defense rewards "
                "effort, TechLead weighs architecture", found=len(tone) == 3 and all(
                    tone.values()), pattern="success", location=loc, content=quote or None,
                confidence=0.6, rationale=f"Tone keywords present per persona: {tone}.",
                data={"tone": tone}),
    ]
