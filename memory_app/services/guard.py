"""Shared steps of every write: the safety scan and the denial events."""

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser

from memory_app.actors import Actor, actor_for
from memory_app.errors import InvalidInput, PolicyDenied, TooLarge, WriteBlocked
from memory_app.models import MemoryStore, Scope
from memory_app.paths import path_error
from memory_app.safety import SCANNER_VERSION, Finding, scan_fields
from memory_app.services.events import event_record


def check_sizes(*, content: str, path: str | None = None) -> None:
    limit = settings.MEMORY_MAX_CONTENT_CHARS
    if len(content) > limit:
        raise TooLarge(f"Content has {len(content)} characters; the limit is {limit}.")
    if path is not None and (error := path_error(path)):
        raise InvalidInput(error, fields={"path": [error]})


def agent_text_fields(
    *,
    tags: Iterable[str] = (),
    entities: Mapping[str, object] | None = None,
    source_refs: Iterable = (),
    **texts: str,
) -> dict[str, str]:
    """Every text an agent supplied with a write, named as an error reports it.

    List items and entity values are scanned one by one, so a finding names
    the exact field (`tags[1]`, `entities.service`, `source_refs[0].ref`)
    and its span is a position in that value.
    """
    fields = dict(texts)
    fields |= {f"tags[{index}]": tag for index, tag in enumerate(tags)}
    fields |= {f"entities.{name}": str(value) for name, value in (entities or {}).items()}
    fields |= {f"source_refs[{index}].ref": ref.ref for index, ref in enumerate(source_refs)}
    return fields


def scan_for_store(fields: Mapping[str, str], store: MemoryStore | None) -> list[Finding]:
    """Scan under the target store's rules (None: a shared store's, for text
    that has no store, as a review note on an item without a target); raise
    WriteBlocked on a blocking hit.

    Returns the tolerated findings (injection phrases in a conversation
    store), which are kept with the version.
    """
    conversation = store is not None and store.scope == Scope.CONVERSATION
    findings = scan_fields(fields, conversation_store=conversation)
    blocking = [f for f in findings if f.blocking]
    if blocking:
        where = sorted({f"{f.detector} in {f.field}" for f in blocking})
        raise WriteBlocked(
            f"The safety scanner refused this write ({', '.join(where)}). "
            "Remove the flagged text and try again.",
            findings=[
                {"detector": f.detector, "field": f.field, "start": f.start, "end": f.end}
                for f in blocking
            ],
        )
    return findings


def scan_note(
    user: AbstractBaseUser, note: str, *, tool: str, store: MemoryStore | None, field: str = "note"
) -> None:
    """Scan a person's note or reason on a decision under `store`'s rules
    (422 write_blocked, recorded). It is kept in the history and repeated in
    events agents read, so it may carry no secret or injection phrase. Call
    it before the decision's transaction: the refusal's record must survive
    that transaction's rollback."""
    if not note:
        return
    context = {"store": store.slug} if store is not None else {}
    with recording_refusals(actor_for(user), tool=tool, **context):
        scan_for_store({field: note}, store)


def scan_record(findings: list[Finding]) -> dict:
    """What a version stores about the scan that passed it."""
    return {
        "scanner_version": SCANNER_VERSION,
        "findings": [f.as_dict() for f in findings],
    }


@contextmanager
def recording_refusals(actor: Actor, *, tool: str, **context: str) -> Iterator[None]:
    """Record a policy denial or a scanner block as an event, after rollback."""
    try:
        yield
    except PolicyDenied as error:
        event_record(
            "memory.policy.denied",
            actor=actor,
            payload={"tool": tool, "reason": error.extra["reason"], **context},
        )
        raise
    except WriteBlocked as error:
        event_record(
            "memory.write.blocked",
            actor=actor,
            payload={"tool": tool, "findings": error.extra["findings"], **context},
        )
        raise
