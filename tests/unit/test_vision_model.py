"""analyze_with_model with a scripted fake vision model: answers, malformed answers, retries,
bounded concurrency, image downscaling, and how the findings use the model's reading."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import re
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.runnables import Runnable, RunnableLambda
from PIL import Image
from pydantic import PrivateAttr, ValidationError

from automaton_auditor.forensics.vision.inspector import (
    DiagramAnalysis,
    analyze_with_model,
    vision_findings,
)
from automaton_auditor.retry import RetryPolicy
from automaton_auditor.state import DiagramFacts

NO_WAIT = RetryPolicy(attempts=3, backoff_s=0)

PARALLEL = json.dumps({"kind": "state_machine", "parallel_detectives": True,
                       "aggregation": True, "parallel_judges": True, "synthesis": True,
                       "described_flow": "START -> [Repo | Doc | Vision] -> Aggregator -> "
                                         "[Prosecutor | Defense | TechLead] -> ChiefJustice",
                       "node_labels": ["RepoInvestigator", "ChiefJustice"]})
LINEAR = json.dumps({"kind": "generic_boxes", "parallel_detectives": False,
                     "aggregation": False, "parallel_judges": False, "synthesis": False,
                     "described_flow": "linear: A -> B -> C", "node_labels": ["A", "B", "C"]})


class ScriptedVisionModel(GenericFakeChatModel):
    """Answers per page from a script (one entry per attempt, the last one repeats)."""

    script: dict[int, list[str]]
    _calls: list[int] = PrivateAttr(default_factory=list)
    _sizes: list[tuple[int, int]] = PrivateAttr(default_factory=list)
    _in_flight: int = PrivateAttr(default=0)
    _peak: int = PrivateAttr(default=0)

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Runnable[Any, Any]:
        async def answer(messages: list[Any]) -> Any:
            text, url = "", ""
            for part in messages[-1].content:
                text += part.get("text", "")
                url = part.get("image_url", {}).get("url", url)
            page = int(re.search(r"Page (\d+)", text).group(1))  # type: ignore[union-attr]
            png = base64.b64decode(url.split(",", 1)[1])
            self._sizes.append(Image.open(io.BytesIO(png)).size)
            self._in_flight += 1
            self._peak = max(self._peak, self._in_flight)
            await asyncio.sleep(0.005)
            self._in_flight -= 1
            attempt = self._calls.count(page)
            self._calls.append(page)
            replies = self.script[page]
            reply = replies[min(attempt, len(replies) - 1)]
            if reply == "RAISE":
                raise RuntimeError("provider error 503")
            return schema.model_validate(json.loads(reply))

        return RunnableLambda(answer)


def _png(size: tuple[int, int] = (64, 48)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, "white").save(buffer, format="PNG")
    return buffer.getvalue()


def _model(script: dict[int, list[str]]) -> ScriptedVisionModel:
    return ScriptedVisionModel(messages=iter([]), script=script)


def test_answers_fill_analysis_and_text_candidates_are_left_alone() -> None:
    diagrams = [DiagramFacts(page=1, kind="raster"), DiagramFacts(page=2, kind="mermaid"),
                DiagramFacts(page=3, kind="vector")]
    model = _model({1: [PARALLEL], 3: [LINEAR]})
    out = asyncio.run(analyze_with_model(diagrams, [_png(), b"", _png()], model, policy=NO_WAIT))
    assert out[0].analysis["kind"] == "state_machine" and out[0].analysis["degraded"] is False
    assert out[1].analysis == {}
    assert out[2].analysis["parallel_judges"] is False
    assert sorted(model._calls) == [1, 3]


def test_malformed_answers_are_retried_then_marked_degraded() -> None:
    diagrams = [DiagramFacts(page=1), DiagramFacts(page=2), DiagramFacts(page=3)]
    bad_schema = json.dumps({"kind": "pie_chart", "parallel_detectives": "maybe"})
    model = _model({1: ["{not json", PARALLEL], 2: [bad_schema], 3: ["RAISE"]})
    out = asyncio.run(analyze_with_model(diagrams, [_png()] * 3, model, policy=NO_WAIT))
    assert out[0].analysis["degraded"] is False and out[0].analysis["attempts"] == 2
    assert out[1].analysis["degraded"] is True and "ValidationError" in out[1].analysis["error"]
    assert out[2].analysis == {"degraded": True, "attempts": 3,
                               "error": "RuntimeError: provider error 503"}
    assert model._calls.count(2) == 3  # 1 + 2 retries


def test_concurrency_is_bounded_and_images_downscaled() -> None:
    diagrams = [DiagramFacts(page=i) for i in range(1, 9)]
    model = _model({i: [LINEAR] for i in range(1, 9)})
    out = asyncio.run(analyze_with_model(diagrams, [_png((1200, 600))] * 8, model,
                                         max_concurrency=2, max_image_side=512, policy=NO_WAIT))
    assert all(not d.analysis["degraded"] for d in out)
    assert model._peak <= 2
    assert set(model._sizes) == {(512, 256)}


def test_a_model_without_structured_output_degrades_every_image() -> None:
    class NoTools(GenericFakeChatModel):
        def with_structured_output(self, schema: Any, **kwargs: Any) -> Runnable[Any, Any]:
            raise NotImplementedError("no tool calling")

    out = asyncio.run(analyze_with_model([DiagramFacts(page=1)], [_png()],
                                         NoTools(messages=iter([]))))
    assert out[0].analysis["degraded"] is True and "NotImplementedError" in out[0].analysis["error"]


def test_findings_use_model_readings_but_not_degraded_ones() -> None:
    good = DiagramFacts(page=4, kind="raster",
                        analysis={**json.loads(PARALLEL), "degraded": False})
    degraded = DiagramFacts(page=2, kind="raster", analysis={"degraded": True, "error": "x"})
    by_facet = {f.facet: f for f in vision_findings([degraded, good])}
    judges = by_facet["vision.flow.parallel_judges"]
    assert judges.found and judges.location == "report p.4"
    assert "vision model" in (judges.content or "")
    assert not by_facet["vision.flow.linear"].found
    only_bad = {f.facet: f for f in vision_findings([degraded])}
    assert not only_bad["vision.flow.parallel_judges"].found
    assert only_bad["vision.flow.parallel_judges"].confidence <= 0.3


def test_schema_bounds_model_strings() -> None:
    too_long = {**json.loads(LINEAR), "described_flow": "x" * 601}
    with pytest.raises(ValidationError, match="described_flow"):
        DiagramAnalysis.model_validate(too_long)
    with pytest.raises(ValidationError, match="extra"):
        DiagramAnalysis.model_validate({**json.loads(LINEAR), "verdict": "guilty"})


def test_method_wire_schema_and_include_raw_answers() -> None:
    """A JSON-schema dict on the wire gives dict answers, include_raw gives
    {"raw", "parsed", "parsing_error"}: both are validated against DiagramAnalysis."""
    seen: dict[str, Any] = {}
    answers = iter([{"raw": "…", "parsed": None, "parsing_error": "bad json"},
                    {"raw": "…", "parsed": json.loads(PARALLEL), "parsing_error": None}])

    class RawModel(GenericFakeChatModel):
        def with_structured_output(self, schema: Any, **kwargs: Any) -> Runnable[Any, Any]:
            seen.update(schema=schema, **kwargs)

            async def answer(messages: list[Any]) -> Any:
                return next(answers)

            return RunnableLambda(answer)

    wire = DiagramAnalysis.model_json_schema()
    out = asyncio.run(analyze_with_model([DiagramFacts(page=1)], [_png()],
                                         RawModel(messages=iter([])), policy=NO_WAIT,
                                         method="json_schema", wire_schema=wire))
    assert seen == {"schema": wire, "method": "json_schema"}
    assert out[0].analysis["attempts"] == 2 and out[0].analysis["synthesis"] is True


def test_plain_scanned_pages_are_not_sent_when_a_graphic_one_exists() -> None:
    scans = [DiagramFacts(page=i, kind="scan", data={"likely_diagram": i == 2})
             for i in (1, 2, 3)]
    model = _model({2: [PARALLEL]})
    out = asyncio.run(analyze_with_model(scans, [_png()] * 3, model, policy=NO_WAIT))
    assert model._calls == [2] and out[0].analysis == {} and out[2].analysis == {}
    plain = [DiagramFacts(page=i, kind="scan", data={"likely_diagram": False}) for i in (1, 2)]
    model = _model({1: [LINEAR], 2: [LINEAR]})
    asyncio.run(analyze_with_model(plain, [_png()] * 2, model, policy=NO_WAIT))
    assert sorted(model._calls) == [1, 2]  # no graphic scan: every page is worth a look


def test_pictures_the_model_calls_no_diagram_do_not_count_as_diagrams() -> None:
    photo = DiagramFacts(page=1, kind="raster",
                         analysis={**json.loads(LINEAR), "kind": "not_a_diagram",
                                   "degraded": False})
    extract = vision_findings([photo])[0]
    assert extract.facet == "vision.extract" and not extract.found
    chart = photo.model_copy(update={"analysis": {**photo.analysis, "kind": "generic_boxes"}})
    assert vision_findings([chart])[0].found
