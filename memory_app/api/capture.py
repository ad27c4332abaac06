"""The memory_capture tool: a run's transcript in, conversation drafts out."""

import re
from typing import Annotated, Self

from drf_spectacular.utils import OpenApiResponse
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator
from rest_framework.response import Response

from memory_app.actors import Actor
from memory_app.api.schemas import Input, SourceRefIn, present
from memory_app.api.tools import WRITE_ERRORS, ToolView
from memory_app.api.validation import RUNTIME_VALUE
from memory_app.capture.service import memory_capture
from memory_app.capture.transcript import messages_from
from memory_app.services.versions import SourceRef

# A message's role is a word: it heads the message in what the optional
# model reads, so it may carry neither markup nor text of its own.
ROLE_PATTERN = r"^[A-Za-z_-]{1,40}$"
_RUN_ID = re.compile(RUNTIME_VALUE, re.ASCII)


def _run_id(value: str) -> str:
    """As X-Memory-Run is held: the run id heads every draft's source ref
    (`run-42#m9:120-260`), which a '#' or a line break would forge."""
    if value and not _RUN_ID.fullmatch(value):
        raise ValueError("1 to 200 letters, digits or . _ : @ / + = -")
    return value


RunId = Annotated[
    str,
    AfterValidator(_run_id),
    Field(
        max_length=200,
        description="The run the transcript is of (default: X-Memory-Run).",
        json_schema_extra={"pattern": RUNTIME_VALUE},
    ),
]


class MessageIn(Input):
    role: str = Field(pattern=ROLE_PATTERN, description="user, assistant, tool, …")
    content: str = Field(description="The message text.")


class CaptureIn(Input):
    """A run's transcript or final report: `transcript` as text, or `messages`."""

    # `_one_form` in the JSON Schema.
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "oneOf": [
                present("transcript", absent=("messages",)),
                present("messages", absent=("transcript",)),
            ]
        },
    )
    transcript: str | None = Field(None, min_length=1, description="The run as plain text.")
    messages: list[MessageIn] | None = Field(None, min_length=1, max_length=1000)
    run_id: RunId = ""
    source_refs: list[SourceRefIn] = Field(
        default_factory=list, max_length=20, description="Added to every draft's own refs."
    )

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        if (self.transcript is None) == (self.messages is None):
            raise ValueError("Send either 'transcript' or 'messages', not both and not neither.")
        return self


class KeptOut(BaseModel):
    id: str
    path: str
    title: str
    kind: str = Field(description="learning, incident, command or preference")
    outcome: str = Field(description="created, updated or deduplicated")


class SkippedOut(BaseModel):
    reason: str
    kind: str | None = None
    excerpt: str | None = Field(None, description="Never present for a scanner refusal.")
    retry_after: int | None = Field(
        None, description="With rate_limited: seconds to wait before capturing the rest."
    )


class CaptureOut(BaseModel):
    kept: list[KeptOut]
    skipped: list[SkippedOut]


class MemoryCaptureView(ToolView):
    name = "memory_capture"
    description = (
        "At the end of a run, send its transcript or final report: learnings, root cause / "
        "fix / verified-by statements, commands that resolved an incident and preferences the "
        "user stated become drafts in this conversation's store, each citing its span. "
        "Returns what was kept and what was skipped, and why."
    )
    write = True
    needs_conversation = True
    input_model = CaptureIn
    responses = {200: OpenApiResponse(CaptureOut), **WRITE_ERRORS}

    def run(self, actor: Actor, data: CaptureIn) -> Response:
        messages = messages_from(
            text=data.transcript,
            messages=None if data.messages is None else [m.model_dump() for m in data.messages],
        )
        result = memory_capture(
            actor=actor,
            messages=messages,
            run_id=data.run_id,
            source_refs=[SourceRef(r.kind.value, r.ref) for r in data.source_refs],
        )
        return Response(
            {
                "kept": [
                    {
                        "id": str(write.document.pk),
                        "path": write.document.path,
                        "title": write.document.title,
                        "kind": draft.kind,
                        "outcome": write.outcome,
                    }
                    for draft, write in result.kept
                ],
                "skipped": [
                    {
                        key: value
                        for key, value in (
                            ("reason", s.reason),
                            ("kind", s.kind),
                            ("excerpt", s.excerpt),
                            ("retry_after", s.retry_after),
                        )
                        if value
                    }
                    for s in result.skipped
                ],
            }
        )
