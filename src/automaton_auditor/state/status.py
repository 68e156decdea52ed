"""Typed statuses that travel in the state: how each detective ended, and which judge calls
failed on the provider's side (read by the dialectics node, never matched as text)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from automaton_auditor.state.models import Judge

StatusKind = Literal["ok", "degraded", "failed"]


class DetectiveStatus(BaseModel):
    """How a detective ended: ``ok`` (optional note), ``degraded`` (evidence about an unusable
    input) or ``failed`` (it could not work), with the reason. Read fields, never its text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    state: StatusKind
    reason: str = ""

    @property
    def failed(self) -> bool:
        """True when the detective could not do its work."""
        return self.state == "failed"

    @property
    def ok(self) -> bool:
        """True when the detective did its work on a usable input."""
        return self.state == "ok"

    def __str__(self) -> str:
        if self.state == "ok":
            return f"ok ({self.reason})" if self.reason else "ok"
        return f"{self.state}: {self.reason}" if self.reason else self.state


def failed_detectives(statuses: dict[str, DetectiveStatus] | None) -> dict[str, DetectiveStatus]:
    """The detectives of a run that failed, by source."""
    return {k: v for k, v in sorted((statuses or {}).items()) if v.failed}


CallFailureKind = Literal["rejected", "unavailable", "client", "circuit_open", "unexpected"]


class CallFailure(BaseModel):
    """A judge's model call that failed on the provider's side (the opinion is degraded).

    `stops_bench` is True when the failure means no later call can succeed (the provider
    rejected the credentials, or the circuit opened after consecutive failures): the
    dialectics node reads these from the state and stops the run with a partial report.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    judge: Judge
    criterion_id: str
    round: int = Field(default=1, ge=1, le=2)
    kind: CallFailureKind
    reason: str
    stops_bench: bool = False
