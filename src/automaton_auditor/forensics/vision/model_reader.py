"""Reading diagrams with a vision-capable chat model (any LangChain `BaseChatModel`, e.g. an
OpenAI-compatible endpoint through `ChatOpenAI`).

Each drawn candidate (raster image, scanned page, rendered vector region) is sent as a
base64 PNG, downscaled to a size cap, with a structured question; the answer is parsed into
`DiagramAnalysis`. Calls run with bounded concurrency under the one retry policy of every model
call (`automaton_auditor.retry`: Retry-After, bounded backoff with jitter, no retry on client
errors, a per-call timeout, the endpoint's circuit); a diagram whose answer is still missing or
invalid after the retries, or that the open circuit spared, gets
``analysis = {"degraded": True, "error": ...}`` so the findings ignore it rather than trust it.
"""

from __future__ import annotations

import asyncio
import base64
import io
from importlib import resources
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from PIL import Image
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from automaton_auditor.retry import Circuit, ProviderError, RetryPolicy, Unparsed, acall
from automaton_auditor.state import DiagramFacts

IMAGE_KINDS = ("raster", "scan", "vector")


class DiagramAnalysis(BaseModel):
    """A vision model's structured reading of one diagram. Unknown fields are refused and
    strings are bounded: this takes model output."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["state_machine", "sequence", "generic_boxes", "not_a_diagram"]
    parallel_detectives: bool
    aggregation: bool
    parallel_judges: bool
    synthesis: bool
    described_flow: str = Field(max_length=600)
    # Required (no default) so the schema suits providers' strict JSON-schema modes.
    node_labels: list[str] = Field(max_length=40)


def vision_prompt() -> str:
    """The system prompt (prompts/vision.md, shipped in the package)."""
    return (resources.files("automaton_auditor").joinpath("prompts", "vision.md")
            .read_text(encoding="utf-8"))


def downscale_png(png: bytes, max_side: int) -> bytes:
    """The PNG unchanged when within `max_side`, else downscaled and re-encoded."""
    with Image.open(io.BytesIO(png)) as image:
        if max(image.size) <= max_side:
            return png
        small = image.convert("RGB")
    small.thumbnail((max_side, max_side))
    buffer = io.BytesIO()
    small.save(buffer, format="PNG")
    return buffer.getvalue()


def build_messages(facts: DiagramFacts, png: bytes, max_side: int) -> list[Any]:
    """System prompt plus one human message: the diagram's context as text, then the image."""
    context = (f"Page {facts.page} of the report ({facts.kind}). Text near the image: "
               f"{facts.nearby_text[:400] or '(none)'}")
    if facts.kind == "scan":
        context += ("\nThis is a whole scanned page: read the diagram on it, if there is one, "
                    "and ignore the running text; answer not_a_diagram when there is none.")
    if facts.labels:
        context += f"\nText-layer labels inside it: {', '.join(facts.labels[:30])}"
    data = base64.b64encode(downscale_png(png, max_side)).decode("ascii")
    return [SystemMessage(content=vision_prompt()),
            HumanMessage(content=[
                {"type": "text", "text": context},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}},
            ])]


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, ProviderError | Unparsed):  # already described by the retry policy
        return text[:300]
    return f"{type(exc).__name__}: {text}"[:300]


def _analysis(answer: Any) -> DiagramAnalysis:
    """One answer as a `DiagramAnalysis`; raises `Unparsed` (retried) when it is not one."""
    if isinstance(answer, dict) and "parsed" in answer:  # include_raw=True
        if answer["parsed"] is None:
            raise Unparsed(str(answer.get("parsing_error") or "no parsed answer"))
        answer = answer["parsed"]
    if isinstance(answer, dict):  # a JSON-schema dict was sent: validate here
        try:
            answer = DiagramAnalysis.model_validate(answer)
        except ValidationError as exc:
            raise Unparsed(_one_line(exc)) from exc
    if not isinstance(answer, DiagramAnalysis):
        raise Unparsed(f"unexpected answer type {type(answer).__name__}")
    return answer


async def _ask(structured: Any, messages: list[Any], policy: RetryPolicy,
               circuit: Circuit) -> dict[str, Any]:
    """One diagram under the retry policy; the last error is kept when every attempt fails."""
    attempts = 0

    async def attempt() -> DiagramAnalysis:
        nonlocal attempts
        attempts += 1
        return _analysis(await structured.ainvoke(messages))

    try:
        answer = await acall(attempt, policy, circuit)
    except (ProviderError, Unparsed) as exc:  # any provider error degrades, never crashes
        return {"degraded": True, "error": _one_line(exc), "attempts": attempts}
    return {**answer.model_dump(), "degraded": False, "attempts": attempts}


def _targets(diagrams: list[DiagramFacts], images: list[bytes],
             skip_plain_scans: bool) -> list[int]:
    """Indexes of the candidates worth a model call."""
    drawn = [i for i, (d, png) in enumerate(zip(diagrams, images, strict=False))
             if png and d.kind in IMAGE_KINDS]
    graphic = any(diagrams[i].data.get("likely_diagram") for i in drawn)
    if not (skip_plain_scans and graphic):
        return drawn
    # A monochrome diagram can score low: plain scans are skipped only when some scan
    # scored as graphic, i.e. the scoring works on this report.
    return [i for i in drawn if diagrams[i].kind != "scan" or diagrams[i].data.get(
        "likely_diagram")]


async def analyze_with_model(diagrams: list[DiagramFacts], images: list[bytes],
                             model: BaseChatModel, *, max_concurrency: int = 4,
                             policy: RetryPolicy | None = None, circuit: Circuit | None = None,
                             max_image_side: int = 1024, max_images: int = 40,
                             method: str | None = None, wire_schema: Any = None,
                             skip_plain_scans: bool = True) -> list[DiagramFacts]:
    """Fill `DiagramFacts.analysis` for every drawn candidate that has PNG bytes.

    `method` is passed to ``with_structured_output`` (e.g. "json_schema",
    "function_calling", "json_mode"); `wire_schema` replaces the schema sent to the provider
    (e.g. `DiagramAnalysis`'s JSON schema without length keywords for a strict provider):
    every answer is still validated against `DiagramAnalysis`.

    With `skip_plain_scans`, scanned pages that do not look graphic (``likely_diagram``
    False: pages of text) are not sent when some other scanned page does look graphic.
    `policy` is the run's retry policy and `circuit` its vision endpoint's circuit (defaults:
    the policy's defaults and a circuit of this call alone).
    Text candidates (Mermaid, DOT, arrow chains) and candidates past `max_images` are
    returned unchanged. A model without structured output support degrades every image.
    The returned list has the same order and length as `diagrams`.
    """
    targets = _targets(diagrams, images, skip_plain_scans)[:max_images]
    if not targets:
        return list(diagrams)
    try:
        options: dict[str, Any] = {"method": method} if method else {}
        structured = model.with_structured_output(wire_schema or DiagramAnalysis, **options)
    except (NotImplementedError, ValueError, TypeError) as exc:
        failed = {"degraded": True, "error": _one_line(exc), "attempts": 0}
        return [d.model_copy(update={"analysis": failed}) if i in targets else d
                for i, d in enumerate(diagrams)]
    semaphore = asyncio.Semaphore(max(1, max_concurrency))
    policy = policy or RetryPolicy()
    breaker = circuit or Circuit(threshold=policy.circuit_threshold)

    async def run(index: int) -> dict[str, Any]:
        async with semaphore:
            messages = build_messages(diagrams[index], images[index], max_image_side)
            return await _ask(structured, messages, policy, breaker)

    results = await asyncio.gather(*(run(i) for i in targets))
    by_index = dict(zip(targets, results, strict=True))
    return [d.model_copy(update={"analysis": by_index[i]}) if i in by_index else d
            for i, d in enumerate(diagrams)]
