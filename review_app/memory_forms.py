"""Memory forms that never lose work (system cards and My memories).

A refused save — a field that fails validation, the size limit, the
safety scanner — renders the page again with the form open, everything
typed still in it and each error under the field it concerns. A scanner
finding is a span of a field: a preview beside the field shows where it
is and what kind it is, never its text. A credential is also taken out of
the kept text, so the response never carries a secret back to the
browser (nor to a cache or a screenshot); an injection phrase stays for
the writer to reword.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import HttpRequest

from memory_app.errors import ApplicationError, NotFound, PermissionDenied, WriteBlocked
from memory_app.models import DocType
from memory_app.policy import can_author_store
from memory_app.safety import scan_fields
from memory_app.safety.normalize import normalize
from memory_app.safety.registry import family_of
from memory_app.services.authoring import memory_author
from review_app.errors import page_errors
from review_app.forms import ENTITY_NAMES, TITLE_HINT, MemoryForm, content_limit

PREVIEW_CONTEXT = 40
TITLE_MAX = 300
PATH_MAX = 200
# The metadata inputs (_metadata_fields.html), kept as typed like the rest.
METADATA_NAMES = (
    "doc_type",
    "recall_hint",
    "tags",
    "entity_namespace",
    "entity_service",
    "entity_environment",
    "entity_resource",
    "importance",
    "expires_at",
    "source_refs",
)
METADATA_DEFAULTS = {"doc_type": DocType.FACT, "importance": "5"}


@dataclass(frozen=True)
class Segment:
    """A piece of a preview: plain text, or (`flag` set) a masked finding."""

    text: str = ""
    flag: str = ""


@dataclass
class Refusal:
    """Why a save was refused, field by field, with the values to show again."""

    values: dict[str, str]
    errors: dict[str, list[str]] = field(default_factory=dict)
    previews: dict[str, list[Segment]] = field(default_factory=dict)
    general: list[str] = field(default_factory=list)
    status: int = 400


@dataclass(frozen=True)
class FormField:
    name: str
    label: str
    id: str
    value: str
    textarea: bool = False
    required: bool = False
    max_length: int | None = None
    limit: int | None = None  # shown by a character counter
    hint: str = ""
    errors: tuple[str, ...] = ()
    preview: tuple[Segment, ...] = ()


@dataclass(frozen=True)
class MemoryFormView:
    """What a template needs to draw one memory form."""

    fields: list[FormField]
    refused: bool = False
    general: tuple[str, ...] = ()
    # The metadata inputs' values and errors, by input name.
    metadata: dict[str, str] = field(default_factory=dict)
    metadata_errors: dict[str, str] = field(default_factory=dict)
    doc_types = DocType.choices


def memory_form(
    uid: str = "",
    values: dict[str, str] | None = None,
    *,
    with_path: bool,
    refusal: Refusal | None = None,
) -> MemoryFormView:
    """The title/content(/path) fields of the add form (`uid` empty, ids
    `id_<name>`) or of one memory's edit form (ids `<name>-<uid>`), with
    the metadata inputs' values (`values`, else their defaults)."""
    values = refusal.values if refusal else values or {}
    specs = [
        ("title", "Title", {"max_length": TITLE_MAX, "hint": TITLE_HINT}),
        ("content", "Content", {"textarea": True, "required": True, "limit": content_limit()}),
    ]
    if with_path:
        specs.append(("path", "Path (optional)", {"max_length": PATH_MAX}))
    fields = [
        FormField(
            name=name,
            label=label,
            id=f"{name}-{uid}" if uid else f"id_{name}",
            value=values.get(name, ""),
            errors=tuple(refusal.errors.get(name, ())) if refusal else (),
            preview=tuple(refusal.previews.get(name, ())) if refusal else (),
            **options,
        )
        for name, label, options in specs
    ]
    metadata = {
        name: str(values.get(name) or METADATA_DEFAULTS.get(name, "")) for name in METADATA_NAMES
    }
    if refusal is None:
        return MemoryFormView(fields, metadata=metadata)
    named = {f.name for f in fields} | set(METADATA_NAMES)
    stray = [m for name, ms in refusal.errors.items() if name not in named for m in ms]
    return MemoryFormView(
        fields,
        refused=True,
        general=(*refusal.general, *stray),
        metadata=metadata,
        metadata_errors={
            name: " ".join(refusal.errors[name])
            for name in METADATA_NAMES
            if name in refusal.errors
        },
    )


def check_may_add(request: HttpRequest, store) -> None:
    """403 before any form error for someone who may not add to `store`."""
    if not can_author_store(request.user, store):
        raise DjangoPermissionDenied("Adding memory here needs the right to manage it.")


def add_memory(request: HttpRequest, store) -> tuple[MemoryFormView, int] | None:
    """Add the posted memory to `store` (a card, My memories, the browser):
    None when it saved, else the add form as refused and the status."""
    check_may_add(request, store)
    form = MemoryForm(request.POST)
    refusal = submit(
        request,
        form,
        lambda **_: memory_author(user=request.user, store=store, **form.author_kwargs()),
    )
    if refusal is None:
        return None
    return memory_form(with_path=True, refusal=refusal), refusal.status


def refusal_from_form(form) -> Refusal:
    """A bound form that did not validate, credentials taken out of what
    was typed (see credentials_out)."""
    errors = {name: list(messages) for name, messages in form.errors.items()}
    general = errors.pop("__all__", [])
    return credentials_out(Refusal(_typed(form.data), errors, general=general))


def submit(request: HttpRequest, form, save: Callable[..., object]) -> Refusal | None:
    """Validate `form` and call `save(**cleaned_data)`; None when it saved,
    else the refusal to show in the form. Not-allowed and not-found still
    become the 403 and 404 pages."""
    if not form.is_valid():
        return refusal_from_form(form)
    values = _typed(form.data) | {
        name: value for name, value in form.cleaned_data.items() if isinstance(value, str)
    }
    try:
        save(**form.cleaned_data)
    except (PermissionDenied, NotFound):
        with page_errors(request):
            raise
    except WriteBlocked as error:
        return _scanner_refusal(values, error.extra["findings"])
    except ApplicationError as error:
        fields = error.extra.get("fields") or {}
        if error.code == "too_large":  # the only size the services check is the content's
            fields = {"content": [error.detail]}
        general = [] if fields else [error.detail]
        return credentials_out(Refusal(values, dict(fields), general=general, status=error.status))
    return None


def credentials_out(refusal: Refusal) -> Refusal:
    """`refusal` with each credential in what was typed taken out and named
    under its field, as the scanner's own refusal does, whatever else
    refused the save: a form refused for a bad path or an importance of
    "high" never sends back the token typed in its content either."""
    findings = scan_fields(_scanned(refusal.values), conversation_store=False)
    hits = [f.as_dict() for f in findings if family_of(f.detector) == "secrets"]
    if not hits:
        return refusal
    masked = _scanner_refusal(refusal.values, hits)
    errors = dict(refusal.errors)
    for name, messages in masked.errors.items():
        errors[name] = [*errors.get(name, ()), *messages]
    return Refusal(
        masked.values,
        errors,
        previews=masked.previews,
        general=[*refusal.general, *masked.general],
        status=refusal.status,
    )


def text_without_credentials(text: str) -> str:
    """One typed text (a note, a reason) with its credentials taken out,
    for a page that shows it again."""
    hits = [
        f.as_dict()
        for f in scan_fields({"text": text}, conversation_store=False)
        if family_of(f.detector) == "secrets"
    ]
    return _without_credentials(normalize(text), hits) if hits else text


def _scanned(values: dict[str, str]) -> dict[str, str]:
    """The typed inputs named as a write's fields are scanned
    (guard.agent_text_fields): list items one by one, so that a finding's
    span is a position in its item, as `_items_without_credentials` reads it.
    The inputs that take a number, a moment or a choice are scanned too:
    refused, they are sent back as typed."""
    plain = ("title", "content", "path", "recall_hint", "doc_type", "importance", "expires_at")
    fields = {name: values.get(name, "") for name in plain}
    tags = _items("tags", values.get("tags", ""))
    fields |= {f"tags[{index}]": tag for index, tag in enumerate(tags)}
    fields |= {f"entities.{name}": values.get(f"entity_{name}", "") for name in ENTITY_NAMES}
    refs = _items("source_refs", values.get("source_refs", ""))
    fields |= {f"source_refs[{index}].ref": _ref(line)[1] for index, line in enumerate(refs)}
    return fields


def _typed(data) -> dict[str, str]:
    return {name: data.get(name, "") for name in ("title", "content", "path", *METADATA_NAMES)}


def _scanner_refusal(values: dict[str, str], findings: list[dict]) -> Refusal:
    refusal = Refusal(dict(values), status=422)
    by_input: dict[str, list[dict]] = {}
    for finding in findings:
        by_input.setdefault(_input_of(finding["field"]), []).append(finding)
    typed = {name for name in by_input if values.get(name)}
    for name, hits in by_input.items():
        if name not in typed:
            # A title or path derived from the content: shown where it was typed.
            if not typed:
                refusal.general += [f"{name}: {_finding_message(hit)}" for hit in hits]
            continue
        refusal.errors[name] = [_finding_message(hit) for hit in hits]
        if name in ITEM_INPUTS:
            refusal.values[name] = _items_without_credentials(name, values[name], hits)
            continue
        raw = values[name]
        text = normalize(raw)  # the scanner's spans are positions in this text
        spans = _merged((hit["start"], hit["end"], _kind(hit["detector"])) for hit in hits)
        refusal.previews[name] = _preview(text, spans)
        credentials = [h for h in hits if family_of(h["detector"]) == "secrets"]
        if credentials:
            refusal.values[name] = _without_credentials(text, credentials)
    return refusal


# Inputs holding several items, each scanned alone (`tags[1]`,
# `source_refs[0].ref`): a finding's span is a position in its item.
ITEM_INPUTS = {"tags": ",", "source_refs": "\n"}


def _input_of(scanned: str) -> str:
    """The input a scanned field came from: `entities.service` →
    entity_service, `tags[1]` → tags, `source_refs[0].ref` → source_refs."""
    if scanned.startswith("entities."):
        return f"entity_{scanned.removeprefix('entities.')}"
    return scanned.split("[", 1)[0]


def _items_without_credentials(name: str, text: str, hits: list[dict]) -> str:
    """The items as typed, a credential taken out of the item it is in
    (items are numbered as the form parses them: blank ones skipped)."""
    credentials = [h for h in hits if family_of(h["detector"]) == "secrets"]
    if not credentials:
        return text
    items = _items(name, text)
    for index, item in enumerate(items):
        mine = [h for h in credentials if h["field"].startswith(f"{name}[{index}]")]
        if not mine:
            continue
        if name == "tags":
            items[index] = _without_credentials(normalize(item), mine)
        else:
            kind, ref = _ref(item)
            items[index] = f"{kind} {_without_credentials(normalize(ref), mine)}"
    return (", " if name == "tags" else "\n").join(items)


def _items(name: str, text: str) -> list[str]:
    """The items of a list input as the form parses them: blank ones skipped."""
    return [item.strip() for item in text.split(ITEM_INPUTS[name]) if item.strip()]


def _ref(line: str) -> tuple[str, str]:
    """A source ref line's kind and ref, split as the form splits it."""
    kind, *rest = line.split(None, 1)
    return kind, rest[0].strip() if rest else ""


def _kind(detector: str) -> str:
    """'prompt_injection.ignore_instructions' → 'prompt injection: ignore instructions'."""
    return detector.replace(".", ": ").replace("_", " ")


def _where(start: int, end: int) -> str:
    return f"characters {start + 1} to {end}"


def _finding_message(hit: dict) -> str:
    where = _where(hit["start"], hit["end"])
    if "[" in hit["field"]:
        where = f"{where} of {hit['field']}"
    if family_of(hit["detector"]) == "secrets":
        return (
            f"The safety scanner found a {_kind(hit['detector'])} at {where}; it has been "
            "taken out of the text, which is otherwise as you typed it."
        )
    return f"The safety scanner refused a {_kind(hit['detector'])} at {where}: reword it."


def _merged(spans: Iterable[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    merged: list[tuple[int, int, str]] = []
    for start, end, kind in sorted(spans):
        if merged and start < merged[-1][1]:
            last_start, last_end, last_kind = merged[-1]
            kinds = last_kind if kind in last_kind.split(", ") else f"{last_kind}, {kind}"
            merged[-1] = (last_start, max(last_end, end), kinds)
        else:
            merged.append((start, end, kind))
    return merged


def _preview(text: str, spans: list[tuple[int, int, str]]) -> list[Segment]:
    """Each span masked and labelled, with a little plain text either side."""
    segments: list[Segment] = []
    position = 0
    for start, end, kind in spans:
        gap = text[position:start]
        if position and len(gap) > 2 * PREVIEW_CONTEXT:
            gap = f"{gap[:PREVIEW_CONTEXT]} … {gap[-PREVIEW_CONTEXT:]}"
        elif len(gap) > PREVIEW_CONTEXT and not position:
            gap = f"…{gap[-PREVIEW_CONTEXT:]}"
        segments += [Segment(gap), Segment(flag=f"{kind}, {_where(start, end)}")]
        position = end
    tail = text[position:]
    segments.append(Segment(tail if len(tail) <= PREVIEW_CONTEXT else f"{tail[:PREVIEW_CONTEXT]}…"))
    return [s for s in segments if s.text or s.flag]


def _without_credentials(text: str, hits: list[dict]) -> str:
    for start, end, _ in reversed(_merged((h["start"], h["end"], "") for h in hits)):
        text = f"{text[:start]}[removed secret]{text[end:]}"
    return text
