"""The document page: content, history, diffs between versions, curation."""

from collections.abc import Sequence

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers

from memory_app.access import access_document, store_ref
from memory_app.actors import actor_for
from memory_app.errors import InvalidInput, WriteBlocked
from memory_app.models import DocState
from memory_app.policy import can_curate, can_govern, can_redact, check_can_govern
from memory_app.selectors.chain import version_chain_verify
from memory_app.services.curate import (
    document_always_inject_set,
    document_rollback,
    document_state_set,
)
from memory_app.services.guard import scan_note
from memory_app.services.redact import document_redact, redaction_preview
from review_app.confirm import confirm_delete
from review_app.diffs import build_diff
from review_app.display import diff_view
from review_app.errors import page_errors, refusal_under
from review_app.forms import CurateForm, RedactForm
from review_app.memory_forms import text_without_credentials
from review_app.methods import page_view, post_only
from review_app.pagination import Pager
from review_app.provenance import of_document, version_authors

# Versions per page of the history table, newest first; older ones are on
# the next pages (`?history_page=`).
HISTORY_PAGE_SIZE = 50


def _document(request: HttpRequest, document_id):
    with page_errors(request):
        return access_document(actor_for(request.user), id=document_id, reviewing=True)


@page_view
@login_required
def document_page(request: HttpRequest, document_id) -> HttpResponse:
    return _document_page(request, _document(request, document_id))


def _document_page(
    request: HttpRequest, document, *, refused: dict | None = None, status: int = 400
) -> HttpResponse:
    """The page, also as it is drawn again around a refused curate or
    redact form, with what was typed in it and the error under it
    (`refused`), answering `status` (400 for the form, the service's own
    for a text it refused)."""
    history = _history_page(request, document)
    versions = list(history.object_list)
    head = _head(document, versions)
    authors = version_authors([*versions, head] if head not in versions else versions)
    for version in versions:
        version.written_by, version.approved_by = authors[version.pk]
        # Worked out here, not by filters in each of the page's rows.
        version.changes_query = _changes_query(request, version.version)
    context = {
        "document": document,
        "ref": f"{store_ref(document.store, actor_for(request.user))}/{document.path}",
        "versions": versions,
        "history": history,
        "meta": of_document(document, head, authors),
        "diff_view": diff_view(request),
        "chain": version_chain_verify(document),
        "may_roll_back": can_curate(request.user, document),
        "curate_url": reverse("review:document-curate", args=[document.pk]),
        "may_govern": can_govern(request.user, document),
        "may_redact": can_redact(request.user, document),
        "tombstoned": document.state == DocState.TOMBSTONED,
        # Served by no read from its expiry on, before the expiry job marks it.
        "expired": document.expires_at is not None and document.expires_at <= timezone.now(),
        "refused": refused or {},
        "active_page": "browser",
    }
    status = status if refused else 200
    try:
        context.update(_comparison(document, request.GET, listed=versions))
    except ValueError as error:
        context["compare_error"], status = str(error), 400
    context["choices"] = _compare_choices(versions, context.get("old"), context.get("new"))
    template = "review_app/document.html#diff" if request.htmx else "review_app/document.html"
    response = render(request, template, context, status=status)
    if refused and refused.get("redact_text"):
        # It holds the text being redacted: Back must not show it again.
        add_never_cache_headers(response)
    return response


class _NewestFirst(Sequence):
    """A document's versions, newest first, as the pager slices them.

    Sliced by version number (versions run from 1 to the head's), a page
    costs one query on the (document, version) index, with no OFFSET, and
    the count is the head's number rather than a COUNT query.
    """

    def __init__(self, document):
        self.document = document

    def __len__(self) -> int:
        return self.document.version

    def __getitem__(self, window: slice) -> list:
        head = self.document.version
        versions = self.document.versions.select_related("author")
        versions = versions.filter(version__lte=head - window.start, version__gt=head - window.stop)
        return list(versions.order_by("-version"))


def _history_page(request: HttpRequest, document):
    """The page of the history table named by `?history_page=`; a number
    that is not a page gives the nearest one."""
    pager = Pager(_NewestFirst(document), HISTORY_PAGE_SIZE)
    return pager.get_page(request.GET.get("history_page"))


def _head(document, listed: list):
    """The version the head's metadata comes from: the head's own, or the
    newest stored if the history lacks it. Fetched only when it is not on
    the history page shown."""
    for version in listed:
        if version.version == document.version:
            return version
    versions = document.versions.select_related("author")
    return versions.filter(version=document.version).first() or versions.order_by("-version")[0]


def _changes_query(request: HttpRequest, number: int) -> str:
    """The link to a version's own changes, keeping the page's other
    parameters (the history page shown, the diff layout)."""
    params = request.GET.copy()
    params["from"], params["to"] = number - 1, number
    return f"?{params.urlencode()}"


def _compare_choices(listed: list, old, new) -> list:
    """What the Compare lists offer: the versions on the history page shown,
    and the two being compared wherever they are in the history, so the
    lists always show the comparison on screen."""
    compared = [v for v in (old, new) if v is not None]
    by_number = {v.version: v for v in [*listed, *compared]}
    return sorted(by_number.values(), key=lambda v: v.version, reverse=True)


def _refused_form(request: HttpRequest, form, typed: str, error_field: str) -> dict:
    """What a refused curate or redact form shows again: the text typed in
    `typed`'s field and its error under it; other errors as messages."""
    for name, errors in form.errors.items():
        if name != typed:
            messages.error(request, " ".join(errors))
    return {error_field: " ".join(form.errors.get(typed, ()))}


def _comparison(document, params, listed) -> dict:
    """The diff between two versions of this document, named `?from=&to=`.

    `to` defaults to the head and `from` to the version before `to`; `from=0`
    (or no earlier version) compares against nothing, a new file. A value
    that is not a version number is a ValueError (a message on the page); a
    number this document has no version for is a 404, which is also what a
    version of some other document looks like from here. Versions already
    `listed` for the history table are not fetched again.
    """
    to = _version_number(params, "to", default=document.version, lowest=1)
    start = _version_number(params, "from", default=to - 1, lowest=0)
    wanted = {n for n in (start, to) if n}
    found = {v.version: v for v in listed if v.version in wanted}
    # A number past the head cannot exist: no query (and no integer overflow).
    if wanted - found.keys() and max(wanted) <= document.version:
        found |= {v.version: v for v in document.versions.filter(version__in=wanted)}
    if wanted - found.keys():
        raise Http404("This document has no such version.")
    old, new = found.get(start), found[to]
    return {
        "old": old,
        "new": new,
        "old_label": f"v{start}",
        "new_label": f"v{to}",
        "diff": build_diff(old.content if old else None, new.content),
    }


def _version_number(params, name: str, *, default: int, lowest: int) -> int:
    raw = params.get(name, "").strip()
    if not raw:
        return max(default, lowest)
    if not (raw.isascii() and raw.isdigit()) or int(raw) < lowest:
        # Echoed as typed but for what does not print (a NUL, an escape):
        # each shows as �.
        shown = "".join(c if c.isprintable() else "\ufffd" for c in raw[:40])
        raise ValueError(
            f"“{name}” takes a version number ({lowest} or more), not “{shown}”. "
            "Pick the versions from the lists below."
        )
    return int(raw)


def _document_url(document_id) -> str:
    return reverse("review:document", args=[document_id])


@post_only(_document_url)
@login_required
def document_curate(request: HttpRequest, document_id) -> HttpResponse:
    """Rollback, pin/unpin, tombstone/restore: one form, one action each;
    tombstoning asks first."""
    document = _document(request, document_id)
    form = CurateForm(_curate_fields(request.POST))
    if not form.is_valid():
        # Drawn again with the reason as typed (a credential taken out): forms never lose work.
        refused = _refused_form(request, form, "reason", "reason_error")
        refused["reason"] = text_without_credentials(form.data.get("reason", ""))
        return _document_page(request, document, refused=refused)
    data = form.cleaned_data
    reason = data.get("reason", "")
    with page_errors(request):
        try:
            if data["action"] == "tombstone" and not data["confirm"]:
                return _confirm_tombstone(request, document, reason)
            _curate(request, document, data)
        except (WriteBlocked, InvalidInput) as error:
            # Drawn again with the reason as typed (a credential taken out), as above.
            refused = {
                "reason": text_without_credentials(reason),
                "reason_error": refusal_under(request, error, "reason"),
            }
            return _document_page(request, document, refused=refused, status=error.status)
    return redirect("review:document", document_id=document.pk)


def _confirm_tombstone(request: HttpRequest, document, reason: str) -> HttpResponse:
    """Ask before tombstoning, the reason scanned first as the tombstone
    scans it: the confirmation carries the reason in a hidden input, and a
    refused one (a credential) must not travel there and back, only to be
    refused after the question."""
    check_can_govern(request.user, document)  # the right before the scan, as every write
    scan_note(request.user, reason, tool="document_state_set", store=document.store, field="reason")
    return confirm_delete(
        request,
        document,
        back_url=reverse("review:document", args=[document.pk]),
        carry={"action": "tombstone", "reason": reason},
        active_page="browser",
    )


def _curate(request: HttpRequest, document, data: dict) -> None:
    """Apply the curate form's action, saying what happened."""
    action, reason = data["action"], data.get("reason", "")
    if action == "rollback":
        version = data["version"]
        result = document_rollback(
            user=request.user, document=document, version=version, reason=reason
        )
        if result.version == document.version:
            messages.info(request, f"Version {version} holds the current text; nothing changed.")
        else:
            messages.success(
                request, f"Rolled back to version {version}'s text as version {result.version}."
            )
    elif action in ("pin", "unpin"):
        document_always_inject_set(user=request.user, document=document, value=action == "pin")
        messages.success(request, DONE[action])
    else:
        document_state_set(
            user=request.user, document=document, tombstoned=action == "tombstone", reason=reason
        )
        messages.success(request, DONE[action])


def _curate_fields(posted: QueryDict) -> QueryDict:
    """The curate form's fields. A rollback button of the history submits the
    curate form with its version as its value, so the reason typed above goes
    with it; it stands for `action=rollback` and `version`."""
    version = posted.get("rollback")
    if version is None:
        return posted
    fields = posted.copy()
    fields["action"], fields["version"] = "rollback", version
    return fields


DONE = {
    "pin": "Pinned: agents receive it in every context of its store.",
    "unpin": "Unpinned: agents receive it when it answers their question.",
    "tombstone": "Deleted: agents no longer receive it. Its history stays.",
    "restore": "Restored: agents receive it again.",
}


@post_only(_document_url)
@login_required
def document_redact_page(request: HttpRequest, document_id) -> HttpResponse:
    """Remove a text from the whole history, once the reviewer has seen how
    much it hits; the message says where, never what."""
    document = _document(request, document_id)
    back = redirect("review:document", document_id=document.pk)
    form = RedactForm(request.POST)
    if not form.is_valid():
        # Drawn again with the text as typed (never cached, as the
        # confirmation is): the text to redact is what may not be lost.
        refused = _refused_form(request, form, "text", "redact_error")
        refused["redact_text"] = form.data.get("text", "")
        return _document_page(request, document, refused=refused)
    text = form.cleaned_data["text"]
    if not form.cleaned_data["confirm"]:
        with page_errors(request):
            try:
                preview = redaction_preview(user=request.user, document=document, text=text)
            except InvalidInput as error:
                # A text not in the history, say: shown again as typed, to correct.
                refused = {"redact_error": error.detail, "redact_text": text}
                return _document_page(request, document, refused=refused)
            context = {
                "document": document,
                "preview": preview,
                "text": text,
                "back_url": reverse("review:document", args=[document.pk]),
                "active_page": "browser",
            }
            response = render(request, "review_app/confirm_redact.html", context)
            # It names the text being redacted: Back must not show it again.
            add_never_cache_headers(response)
            return response
        return back
    with page_errors(request):
        result = document_redact(user=request.user, document=document, text=text)
        linked = (
            f" It was redacted from {len(result.also)} linked document(s) too."
            if result.also
            else ""
        )
        if result.broken:
            names = ", ".join(f"{d.store.label}/{d.path}" for d in result.broken)
            linked += f" Not from {names}: its history does not verify; restore it first."
        where = (
            f"Redacted {result.occurrences} occurrence(s) in version(s) "
            f"{', '.join(map(str, result.versions))}."
            if result.versions
            else "Redacted the path."
        )
        moved = f" The document moved to {result.path}." if result.path else ""
        messages.success(request, f"{where}{moved}{linked}")
    return back
