"""How the pages word durations and event details.

Event payloads are JSON written by the services; shown raw they read as
Python reprs (`{'id': '…'}`). Here each becomes labelled fields of plain
text, escaped by the template like any other text: payloads carry paths,
notes and reasons that agents and people typed.
"""

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django import template
from django.urls import reverse

register = template.Library()

LABELS = {
    "run_id": "Run",
    "on_behalf_of": "On behalf of",
    "review_item_id": "Review item",
    "dream_job_id": "Dream job",
    "job_id": "Dream job",
    "trace_id": "Retrieval trace",
    "document_id": "Document",
    "target_store": "Target store",
    "target_path": "Target path",
    "to_version": "Back to version",
    "new_version": "New version",
    "from": "Pinned before",
    "to": "Pinned now",
}


@dataclass(frozen=True)
class Field:
    label: str
    text: str = ""
    items: list[str] = field(default_factory=list)
    url: str = ""


@register.filter
def duration(value: timedelta | float | int | datetime | None, end: datetime | None = None) -> str:
    """ "2 s", "850 ms", "3 min 5 s", "1 h 2 min": a timedelta, seconds, or
    the time from a start (the value) to an `end` (the argument)."""
    if isinstance(value, datetime):
        if not isinstance(end, datetime):
            return ""
        value = end - value
    if isinstance(value, timedelta):
        value = value.total_seconds()
    if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
        return ""
    if value < 1:
        return f"{round(value * 1000)} ms"
    seconds = round(value)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s" if seconds else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


@register.filter
def duration_in_words(value: timedelta | None) -> str:
    """ "15 minutes", "1 hour", "1 hour 30 minutes": a wait as a sentence
    says it, to the minute (rounded up: never shorter than it is)."""
    if not isinstance(value, timedelta) or value <= timedelta(0):
        return ""
    hours, minutes = divmod(math.ceil(value.total_seconds() / 60), 60)
    return " ".join(
        f"{count} {unit}{'' if count == 1 else 's'}"
        for count, unit in ((hours, "hour"), (minutes, "minute"))
        if count
    )


@register.filter
def event_fields(payload: object) -> list[Field]:
    """An event's payload as labelled fields, in the order it was written."""
    if not isinstance(payload, dict):
        return [Field("Details", _text(payload))]
    fields = []
    for name, value in payload.items():
        label = LABELS.get(name) or name.replace("_", " ").capitalize()
        if isinstance(value, list):
            entries = [_text(entry) for entry in value]
            fields.append(Field(label, items=entries) if entries else Field(label, "none"))
        elif name == "trace_id" and isinstance(value, int):
            fields.append(Field(label, str(value), url=reverse("review:trace", args=[value])))
        else:
            fields.append(Field(label, _text(value)))
    return fields


def _text(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return _entry(value)
    if isinstance(value, list):
        return ", ".join(_text(entry) for entry in value)
    return str(value)


def _entry(entry: dict) -> str:
    """One element of a payload list: a scanner finding, an injected
    document, or anything else as "name value" pairs."""
    if {"detector", "start", "end"} <= entry.keys():
        where = f" in {entry['field']}" if entry.get("field") else ""
        return f"{entry['detector']} at {entry['start']}-{entry['end']}{where}"
    if "path" in entry:
        rest = [_text(entry[key]) for key in ("trust", "block") if key in entry]
        head = f"{entry['path']} in {entry['store']}" if "store" in entry else str(entry["path"])
        return " · ".join([head, *rest])
    return ", ".join(f"{name.replace('_', ' ')} {_text(value)}" for name, value in entry.items())
