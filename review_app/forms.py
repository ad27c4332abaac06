import uuid

from django import forms

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

    def clean(self):
        data = super().clean()
        if data.get("action") == "rollback" and not data.get("version"):
            raise forms.ValidationError("Choose the version to roll back to.")
        return data


class DeletionForm(ErrorTextMixin, forms.Form):
    action = forms.ChoiceField(choices=[("confirm", "confirm"), ("decline", "decline")])
    note = forms.CharField(required=False, max_length=2000)
