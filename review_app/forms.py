import uuid

from django import forms
from django.conf import settings

from memory_app.dreams.kinds import KINDS
from memory_app.models import DocState, DocType, GrantLevel, Scope, Trust

ACTIONS = [("approve", "approve"), ("reject", "reject"), ("defer", "defer")]
BULK_LIMIT = 200


class ErrorTextMixin:
    def error_text(self) -> str:
        return " ".join(message for messages in self.errors.values() for message in messages)


class DecisionForm(ErrorTextMixin, forms.Form):
    action = forms.ChoiceField(choices=ACTIONS)
    note = forms.CharField(required=False, max_length=2000)
    content = forms.CharField(required=False, max_length=100_000, strip=False)

    def clean(self):
        data = super().clean()
        if data.get("action") == "reject" and not data.get("note"):
            raise forms.ValidationError("Say why when rejecting: the note is required.")
        return data


class BulkDecisionForm(DecisionForm):
    """A decision for every checked item (`items`, review item ids)."""

    def __init__(self, data) -> None:
        super().__init__(data)
        self.item_ids = data.getlist("items")

    def clean(self):
        data = super().clean()
        try:
            data["items"] = [str(uuid.UUID(value)) for value in self.item_ids[:BULK_LIMIT]]
        except ValueError:
            raise forms.ValidationError("Not a review item id.") from None
        if not data["items"]:
            raise forms.ValidationError("Select at least one item.")
        return data


class CurateForm(ErrorTextMixin, forms.Form):
    action = forms.ChoiceField(
        choices=[(a, a) for a in ("rollback", "pin", "unpin", "tombstone", "restore")]
    )
    version = forms.IntegerField(required=False, min_value=1)
    reason = forms.CharField(required=False, max_length=2000)
    confirm = forms.BooleanField(required=False)

    def clean(self):
        data = super().clean()
        if data.get("action") == "rollback" and not data.get("version"):
            raise forms.ValidationError("Choose the version to roll back to.")
        return data


class RedactForm(ErrorTextMixin, forms.Form):
    text = forms.CharField(max_length=20_000, strip=False)


class DeletionForm(ErrorTextMixin, forms.Form):
    action = forms.ChoiceField(choices=[("confirm", "confirm"), ("decline", "decline")])
    note = forms.CharField(required=False, max_length=2000)


def _blank_first(choices) -> list[tuple[str, str]]:
    return [("", "any"), *choices]


class BrowserFilterForm(ErrorTextMixin, forms.Form):
    """The memory browser's filters, all optional; read from the query string."""

    q = forms.CharField(required=False, max_length=500, label="Search")
    scope = forms.ChoiceField(required=False, choices=_blank_first(Scope.choices))
    store = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)
    prefix = forms.CharField(required=False, max_length=200, label="Path prefix")
    trust = forms.ChoiceField(required=False, choices=_blank_first(Trust.choices))
    state = forms.ChoiceField(required=False, choices=_blank_first(DocState.choices))
    doc_type = forms.ChoiceField(
        required=False, choices=_blank_first(DocType.choices), label="Type"
    )
    tag = forms.CharField(required=False, max_length=64)

    def clean_prefix(self) -> str:
        return self.cleaned_data["prefix"].strip().lstrip("/")


class DreamRunForm(ErrorTextMixin, forms.Form):
    kind = forms.ChoiceField(choices=[(kind, kind) for kind in sorted(KINDS)])


def content_limit() -> int:
    """The limit the services enforce on content (check_sizes); forms and
    their character counters show the same figure."""
    return settings.MEMORY_MAX_CONTENT_CHARS


class MemoryContentMixin:
    """Content as the services count it: browsers send line breaks as CRLF,
    which would count twice against the limit the counter shows."""

    def clean_content(self) -> str:
        content = self.cleaned_data["content"].replace("\r\n", "\n")
        if len(content) > content_limit():
            raise forms.ValidationError(
                f"Content has {len(content)} characters; the limit is {content_limit()}."
            )
        return content


TITLE_HINT = "Left empty, the first line of the content."


class MemoryForm(MemoryContentMixin, ErrorTextMixin, forms.Form):
    """A person adding a memory on a system card or in My memories."""

    title = forms.CharField(required=False, max_length=300, help_text=TITLE_HINT)
    content = forms.CharField(strip=False)
    path = forms.CharField(required=False, max_length=200)


class MemoryActionForm(MemoryContentMixin, ErrorTextMixin, forms.Form):
    """Edit, pin, delete or restore one memory. Deleting needs `confirm`:
    without it the page asks first."""

    action = forms.ChoiceField(
        choices=[(a, a) for a in ("edit", "pin", "unpin", "tombstone", "restore")]
    )
    title = forms.CharField(required=False, max_length=300, help_text=TITLE_HINT)
    content = forms.CharField(required=False, strip=False)
    confirm = forms.BooleanField(required=False)

    def clean(self):
        data = super().clean()
        if data.get("action") == "edit" and "content" in data and not data["content"].strip():
            self.add_error("content", "An edit needs some content.")
        return data


class UsageFilterForm(ErrorTextMixin, forms.Form):
    view = forms.ChoiceField(
        required=False,
        choices=[("runs", "runs"), ("documents", "documents"), ("unused", "never used")],
    )
    run = forms.CharField(required=False, max_length=200)
    conversation = forms.CharField(required=False, max_length=200)


EVENT_TYPES = (
    "memory.context.loaded",
    "memory.document.written",
    "memory.write.blocked",
    "memory.policy.denied",
    "memory.promotion.proposed",
    "memory.promotion.approved",
    "memory.promotion.rejected",
    "memory.deletion.requested",
    "memory.deletion.declined",
    "memory.document.tombstoned",
    "memory.document.restored",
    "memory.document.rolled_back",
    "memory.document.always_inject",
    "memory.canary.drift",
    "memory.exported",
)


class EventFilterForm(ErrorTextMixin, forms.Form):
    type = forms.ChoiceField(required=False, choices=[("", "all"), *((t, t) for t in EVENT_TYPES)])
    after = forms.IntegerField(required=False, min_value=0)
    before = forms.IntegerField(required=False, min_value=1)


class GrantForm(ErrorTextMixin, forms.Form):
    system_slug = forms.SlugField(max_length=100, label="System")
    team = forms.CharField(max_length=150)
    level = forms.ChoiceField(choices=GrantLevel.choices)


class TeamPolicyForm(ErrorTextMixin, forms.Form):
    read = forms.BooleanField(required=False)
    manage = forms.BooleanField(required=False)


class WebhookForm(ErrorTextMixin, forms.Form):
    url = forms.URLField(label="HTTPS URL", max_length=500, assume_scheme="https")
    event_types = forms.CharField(
        label="Event types",
        max_length=1000,
        help_text="Comma-separated: memory.write.blocked, memory.promotion.*, or * for all.",
    )

    def clean_event_types(self) -> list[str]:
        return [t.strip() for t in self.cleaned_data["event_types"].split(",") if t.strip()]
