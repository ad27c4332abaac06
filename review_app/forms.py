import uuid

from django import forms
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import NON_FIELD_ERRORS
from django.core.validators import ProhibitNullCharactersValidator, RegexValidator
from django.utils import timezone
from django.utils.timezone import localtime
from pydantic import TypeAdapter, ValidationError

from memory_app.api.schemas import EntitiesIn, SourceRefs, Tags
from memory_app.api.validation import text_problem
from memory_app.dreams.kinds import KINDS
from memory_app.models import DocState, DocType, GrantLevel, ReviewStatus, Scope, Trust
from memory_app.moments import in_utc
from memory_app.paths import STORE_SLUG_REGEX
from memory_app.services.authoring import AuthoredMetadata
from memory_app.services.events import EVENT_TYPES
from memory_app.services.promote import DECIDED_HERE
from memory_app.services.versions import SourceRef

ACTIONS = [("approve", "approve"), ("reject", "reject"), ("defer", "defer")]
BULK_LIMIT = 200


def _blank_first(choices) -> list[tuple[str, str]]:
    return [("", "any"), *choices]


def refuse_control_characters(value: str) -> None:
    """What the agent API refuses in text, refused in a form too: C0 and C1
    control characters but tab and line breaks, and lone surrogates. Django
    refuses only NUL; the others were stored from the pages and handed to
    agents raw (an ESC starts a terminal's escape sequence)."""
    if problem := text_problem(value):
        raise forms.ValidationError(f"{problem} Only tabs and line breaks may be used.")


# Characters that take no room: a name of them alone shows as nothing, and
# one inside a name looks like another name ("pay\u200bments").
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
_NO_ZERO_WIDTH = str.maketrans("", "", ZERO_WIDTH)


def refuse_invisible(value: str) -> None:
    """A text typed but showing nothing: only zero-width characters and spaces."""
    if value and not value.translate(_NO_ZERO_WIDTH).strip():
        raise forms.ValidationError(
            "This holds only invisible characters (zero-width spaces or joiners): "
            "type a visible text, or leave it empty."
        )


def refuse_zero_width(value: str) -> None:
    """A name that would look like another name."""
    if value != value.translate(_NO_ZERO_WIDTH):
        raise forms.ValidationError(
            "Zero-width characters (spaces, joiners, byte-order marks) are not "
            "allowed here: with one, two names look alike."
        )


class Text(forms.CharField):
    """A CharField that refuses control characters (every text field of the pages)."""

    default_validators = [refuse_control_characters]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        # Ours names NUL with the other control characters; Django's own
        # would refuse it a second time in other words.
        self.validators = [
            v for v in self.validators if not isinstance(v, ProhibitNullCharactersValidator)
        ]


def valid_part(form: forms.Form) -> dict:
    """The fields of a filter form that passed: an invalid filter drops out
    alone (reported by the page), the others still apply."""
    form.is_valid()
    return {name: value for name, value in form.cleaned_data.items() if name not in form.errors}


class ErrorTextMixin:
    def error_text(self) -> str:
        """Every error in one line, each field's named by its label ("Note: …")."""
        return " ".join(
            message if name == NON_FIELD_ERRORS else f"{self._label(name)}: {message}"
            for name, messages in self.errors.items()
            for message in messages
        )

    def _label(self, name: str) -> str:
        field = self.fields.get(name)
        return str(field.label) if field and field.label else name.replace("_", " ").capitalize()


class DecisionForm(ErrorTextMixin, forms.Form):
    action = forms.ChoiceField(choices=ACTIONS)
    note = Text(required=False, max_length=2000)
    content = Text(required=False, max_length=100_000, strip=False)

    def clean_content(self) -> str:
        """The "Edit before approving" box is always sent, with a browser's
        CRLF line breaks: as LF, an untouched proposal is not an edit."""
        return self.cleaned_data["content"].replace("\r\n", "\n").replace("\r", "\n")

    def clean(self):
        data = super().clean()
        if data.get("action") == "reject" and not data.get("note") and "note" not in self.errors:
            raise forms.ValidationError("Say why when rejecting: the note is required.")
        # A merge's members ticked "Keep apart" on its card.
        try:
            data["keep_apart"] = [uuid.UUID(v) for v in self.data.getlist("keep_apart")[:50]]
        except ValueError:
            raise forms.ValidationError("Not a document to keep apart.") from None
        return data


class BulkDecisionForm(DecisionForm):
    """A decision for every checked item (`items`, review item ids)."""

    def __init__(self, data) -> None:
        super().__init__(data)
        self.item_ids = data.getlist("items")

    def clean(self):
        data = super().clean()
        try:
            ids = [str(uuid.UUID(value)) for value in self.item_ids[:BULK_LIMIT]]
        except ValueError:
            raise forms.ValidationError("Not a review item id.") from None
        # An item sent twice is decided once, and counted once.
        data["items"] = list(dict.fromkeys(ids))
        if not data["items"]:
            raise forms.ValidationError("Select at least one item.")
        return data


QUEUE_TABS = (
    ReviewStatus.PENDING,
    ReviewStatus.DEFERRED,
    ReviewStatus.APPROVED,
    ReviewStatus.REJECTED,
)


class QueueFilterForm(ErrorTextMixin, forms.Form):
    """The queue's tab and filters, all optional; read from the query string."""

    status = forms.ChoiceField(
        required=False, choices=[(tab.value, tab.label) for tab in QUEUE_TABS]
    )
    store = forms.SlugField(required=False, max_length=120, label="Target store")
    proposer = Text(required=False, max_length=150)
    run = Text(required=False, max_length=200)
    action = forms.ChoiceField(
        required=False, choices=_blank_first((action, action) for action in DECIDED_HERE)
    )

    def filters(self) -> dict[str, str]:
        """The valid, non-empty filters; the tab defaults to pending."""
        chosen = {name: value.strip() for name, value in valid_part(self).items() if value}
        chosen.setdefault("status", ReviewStatus.PENDING.value)
        return chosen


class CurateForm(ErrorTextMixin, forms.Form):
    action = forms.ChoiceField(
        choices=[(a, a) for a in ("rollback", "pin", "unpin", "tombstone", "restore")]
    )
    version = forms.IntegerField(required=False, min_value=1)
    reason = Text(required=False, max_length=2000)
    confirm = forms.BooleanField(required=False)

    def clean(self):
        data = super().clean()
        if data.get("action") == "rollback" and not data.get("version"):
            raise forms.ValidationError("Choose the version to roll back to.")
        return data


class RedactForm(ErrorTextMixin, forms.Form):
    """The text to redact, and whether the reviewer has confirmed its reach.
    Surrounding whitespace is dropped (Enter at the end of the box adds a
    newline the document's text does not hold), and a text box's CRLF line
    breaks become the LF that stored texts and the confirming form carry."""

    text = Text(max_length=20_000)
    confirm = forms.BooleanField(required=False)

    def clean_text(self) -> str:
        return self.cleaned_data["text"].replace("\r\n", "\n")


class DeletionForm(ErrorTextMixin, forms.Form):
    action = forms.ChoiceField(choices=[("confirm", "confirm"), ("decline", "decline")])
    note = Text(required=False, max_length=2000)


class BrowserFilterForm(ErrorTextMixin, forms.Form):
    """The memory browser's filters, all optional; read from the query string."""

    q = Text(required=False, max_length=500, label="Search")
    scope = forms.ChoiceField(required=False, choices=_blank_first(Scope.choices))
    store = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)
    prefix = Text(required=False, max_length=200, label="Path prefix")
    trust = forms.ChoiceField(required=False, choices=_blank_first(Trust.choices))
    state = forms.ChoiceField(required=False, choices=_blank_first(DocState.choices))
    doc_type = forms.ChoiceField(
        required=False, choices=_blank_first(DocType.choices), label="Type"
    )
    tag = Text(required=False, max_length=64)

    def clean_prefix(self) -> str:
        return self.cleaned_data["prefix"].strip().lstrip("/")


class DreamRunForm(ErrorTextMixin, forms.Form):
    kind = forms.ChoiceField(choices=[(kind, kind) for kind in sorted(KINDS)])


def content_limit() -> int:
    """The limit the services enforce on content (check_sizes); forms and
    their character counters show the same figure."""
    return settings.MEMORY_MAX_CONTENT_CHARS


ENTITY_NAMES = ("namespace", "service", "environment", "resource")


def metadata_values(document) -> dict[str, str]:
    """A memory's metadata as its edit form's inputs show it."""
    expires = document.expires_at and localtime(document.expires_at)
    return {
        "recall_hint": document.recall_hint,
        "tags": ", ".join(document.tags),
        **{f"entity_{name}": document.entities.get(name, "") for name in ENTITY_NAMES},
        "importance": str(document.importance),
        "expires_at": expires.strftime("%Y-%m-%dT%H:%M") if expires else "",
    }


class MetadataFieldsMixin(forms.Form):
    """The metadata a person sets on a memory, validated by the same rules
    as an agent's memory_remember (the API's input types)."""

    recall_hint = Text(required=False, max_length=1000, label="Recall when")
    tags = Text(required=False, max_length=1400, help_text="Comma-separated.")
    entity_namespace = Text(required=False, max_length=200, label="Namespace")
    entity_service = Text(required=False, max_length=200, label="Service")
    entity_environment = Text(required=False, max_length=200, label="Environment")
    entity_resource = Text(required=False, max_length=200, label="Resource")
    importance = forms.IntegerField(required=False, min_value=0, max_value=10)
    expires_at = forms.DateTimeField(required=False, label="Expires")
    # Left out of a form: the edit keeps the head's evidence.
    with_source_refs = False
    # Whether a post without the block's marker field (`metadata`) keeps the
    # memory's metadata rather than resetting it.
    metadata_optional = False

    def __init__(self, data=None, *, current=None, **kwargs) -> None:
        """`current`: the memory an edit form was drawn for. An input sent
        back as that form showed it (not in `changed_data`) keeps the
        memory's exact value, which its text cannot carry: a tag holding a
        comma, an expiry's seconds."""
        super().__init__(data, **kwargs)
        self.current = current
        if current is not None:
            shown = metadata_values(current)
            self.initial = {name: self._as_shown(name, shown.get(name, "")) for name in shown}

    def _as_shown(self, name: str, text: str):
        # Compared with what comes back as its field reads it (a moment, a
        # number, a stripped text), so that an input left alone is unchanged.
        try:
            return self.fields[name].to_python(text)
        except forms.ValidationError:
            return text

    def _untouched(self, *names: str) -> bool:
        return self.current is not None and not set(names) & set(self.changed_data)

    def clean_expires_at(self):
        if self._untouched("expires_at"):
            return self.current.expires_at  # even one passed since the form was drawn
        value = self.cleaned_data.get("expires_at")
        if value is None:
            return None
        try:
            value = in_utc(value)
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None
        # Saved, it would vanish at once from every agent's context: a
        # person picking a moment already past has made a slip.
        if value <= timezone.now():
            raise forms.ValidationError(
                "That moment has passed: pick a later one, or leave it empty for no expiry."
            )
        return value

    def clean(self):
        data = super().clean()
        data["metadata"] = None
        if self.errors or (self.metadata_optional and "metadata" not in self.data):
            return data
        raw_refs = self.data.get("source_refs", "") if self.with_source_refs else None
        current = self.current
        if self._untouched("tags"):
            tags = list(current.tags)
        else:
            tags = self._validated(
                "tags",
                lambda: TypeAdapter(Tags).validate_python(
                    [t.strip() for t in data.get("tags", "").split(",") if t.strip()]
                ),
            )
        if self._untouched(*(f"entity_{name}" for name in ENTITY_NAMES)):
            entities = dict(current.entities)
        else:
            entities = self._validated(
                "entities",
                lambda: EntitiesIn.model_validate(
                    {name: data.get(f"entity_{name}") or None for name in ENTITY_NAMES}
                ).model_dump(exclude_none=True),
            )
        refs = (
            None
            if raw_refs is None
            else self._validated("source_refs", lambda: _source_refs(raw_refs))
        )
        if self.errors:
            return data
        importance = 5 if data.get("importance") is None else data["importance"]
        data["metadata"] = AuthoredMetadata(
            recall_hint=(
                current.recall_hint if self._untouched("recall_hint") else data["recall_hint"]
            ),
            tags=tags,
            entities=entities,
            importance=current.importance if self._untouched("importance") else importance,
            expires_at=data.get("expires_at"),
            source_refs=refs,
        )
        return data

    def _validated(self, name: str, validate):
        """`validate()` by the API's rules; its errors go under the input
        they concern (an entity's under that entity's field)."""
        try:
            return validate()
        except ValidationError as error:
            for e in error.errors(include_url=False):
                loc = list(e["loc"])
                field = name
                if name == "entities" and loc and loc[0] in ENTITY_NAMES:
                    field, loc = f"entity_{loc[0]}", loc[1:]
                where = _position(name, loc)
                message = _plain(e, name)
                self.add_error(field, f"{where}: {message}" if where else message)
            return None


# What one item of a list input is called, as the person typed it.
_ITEM = {"tags": "Tag", "source_refs": "Line"}


def _position(name: str, loc: list) -> str:
    """Where in an input an error is, as the person typed it: "Tag 3",
    "Line 2, kind"; nothing for the input as a whole. The API's own paths
    ("tags.2", "source_refs.1.kind") count from 0 and name the JSON."""
    if not loc or not isinstance(loc[0], int):
        return ""
    where = f"{_ITEM.get(name, 'Item')} {loc[0] + 1}"
    return ", ".join([where, *(str(part) for part in loc[1:])])


def _plain(error: dict, name: str) -> str:
    """A validation message in the page's words; pydantic's own for the rest
    ("List should have at most 20 items after validation, not 30")."""
    ctx = error.get("ctx") or {}
    match error["type"]:
        case "too_long":
            what = "tags" if name == "tags" else "lines"
            return f"At most {ctx['max_length']} {what}, not {ctx['actual_length']}."
        case "string_too_long":
            return f"At most {ctx['max_length']} characters."
        case "string_too_short":
            return "Must not be empty."
        case "enum":
            return f"Must be one of {ctx['expected']}."
    return error["msg"]


def _source_refs(text: str) -> list[SourceRef]:
    """One ref a line, `kind ref` (`incident INC-4411`, `url https://…`)."""
    lines = [line.strip().split(None, 1) for line in text.splitlines() if line.strip()]
    refs = TypeAdapter(SourceRefs).validate_python(
        [{"kind": parts[0], "ref": parts[1] if len(parts) > 1 else ""} for parts in lines]
    )
    return [SourceRef(r.kind.value, r.ref) for r in refs]


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


class MemoryForm(MemoryContentMixin, ErrorTextMixin, MetadataFieldsMixin):
    """A person adding a memory: on a system card, in My memories, or (a
    reviewer) in a workspace store from the browser."""

    title = Text(
        required=False, max_length=300, help_text=TITLE_HINT, validators=[refuse_invisible]
    )
    content = Text(strip=False)
    path = Text(required=False, max_length=200)
    doc_type = forms.ChoiceField(
        required=False, choices=DocType.choices, initial=DocType.FACT, label="Type"
    )
    # Parsed in clean(); declared so that its errors are named under it.
    source_refs = Text(required=False, strip=False, label="Source refs")
    with_source_refs = True

    def author_kwargs(self) -> dict:
        data = self.cleaned_data
        kwargs = {name: data[name] for name in ("title", "content", "path")}
        return {
            **kwargs,
            "doc_type": data["doc_type"] or DocType.FACT,
            "metadata": data["metadata"],
        }


def posted_base_version(data) -> int | None:
    """The version of the memory an edit form was drawn from (its hidden
    `base_version`); None when the form does not say, or says nothing a
    version can be."""
    value = data.get("base_version", "")
    return int(value) if value.isascii() and value.isdigit() and len(value) < 10 else None


class MemoryActionForm(MemoryContentMixin, ErrorTextMixin, MetadataFieldsMixin):
    """Edit, pin, delete or restore one memory. Deleting needs `confirm`:
    without it the page asks first. An edit names the version it was drawn
    from (`base_version`), which the save checks is still the head."""

    action = forms.ChoiceField(
        choices=[(a, a) for a in ("edit", "pin", "unpin", "tombstone", "restore")]
    )
    title = Text(
        required=False, max_length=300, help_text=TITLE_HINT, validators=[refuse_invisible]
    )
    content = Text(required=False, strip=False)
    confirm = forms.BooleanField(required=False)
    metadata_optional = True

    def clean(self):
        data = super().clean()
        if data.get("action") == "edit" and "content" in data and not data["content"].strip():
            self.add_error("content", "An edit needs some content.")
        data["base_version"] = posted_base_version(self.data)
        return data


class UsageFilterForm(ErrorTextMixin, forms.Form):
    view = forms.ChoiceField(
        required=False,
        choices=[("runs", "runs"), ("documents", "documents"), ("unused", "never used")],
    )
    run = Text(required=False, max_length=200)
    conversation = Text(required=False, max_length=200)
    # Hit rates over the last so many days (the inbox's figure is over 7).
    days = forms.IntegerField(required=False, min_value=1, max_value=3660)


class EventFilterForm(ErrorTextMixin, forms.Form):
    type = forms.ChoiceField(required=False, choices=[("", "all"), *((t, t) for t in EVENT_TYPES)])
    after = forms.IntegerField(required=False, min_value=0)
    before = forms.IntegerField(required=False, min_value=1)


# The rule the store of a system holds its slug to (memory_app.paths).
store_slug = RegexValidator(
    STORE_SLUG_REGEX,
    "A system is named in lowercase letters, digits, '-' and '_', "
    "starting with a letter or digit: payments-api.",
)


class SystemSlugField(Text):
    """A system's slug, checked by the store rule alone. A SlugField refused
    "Bad Slug!" twice, in Django's words and in ours; the store rule admits
    no control character either, so Text's check would only repeat it."""

    default_validators = [store_slug]


class GrantForm(ErrorTextMixin, forms.Form):
    system_slug = SystemSlugField(max_length=100, label="System")
    team = Text(max_length=150, validators=[refuse_invisible, refuse_zero_width])
    level = forms.ChoiceField(choices=GrantLevel.choices)


class TeamPolicyForm(ErrorTextMixin, forms.Form):
    read = forms.BooleanField(required=False)
    manage = forms.BooleanField(required=False)


class WebhookForm(ErrorTextMixin, forms.Form):
    url = forms.URLField(label="HTTPS URL", max_length=500, assume_scheme="https")
    event_types = Text(
        label="Event types",
        max_length=1000,
        help_text="Comma-separated: memory.write.blocked, memory.promotion.*, or * for all.",
    )

    def clean_event_types(self) -> list[str]:
        return [t.strip() for t in self.cleaned_data["event_types"].split(",") if t.strip()]


class WebhookStateForm(forms.Form):
    """The state wanted (`true` or `false`), not a flip: sent twice (a
    double click, a stale tab), it leaves the webhook as the person last
    asked. Like a checkbox, no `active` means off."""

    active = forms.BooleanField(required=False)


class LoginForm(AuthenticationForm):
    """Django's sign-in form, refusing a username longer than any account's
    before it is checked. The lockout (django-axes) records each failed
    name, and one longer than its column was a 500 instead of the usual
    "did not match"."""

    def clean(self):
        username = self.cleaned_data.get("username") or ""
        if len(username) > (self.username_field.max_length or 150):
            raise self.get_invalid_login_error()
        return super().clean()
