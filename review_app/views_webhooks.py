"""Webhooks, for staff: register an endpoint, switch it off or on, and see
each delivery's status (memory_app/webhooks/)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from memory_app.errors import InvalidInput
from memory_app.models import Webhook, WebhookDelivery
from memory_app.permissions import can_administer
from memory_app.webhooks.services import webhook_register, webhook_set_active
from review_app.errors import page_errors
from review_app.forms import WebhookForm

RECENT_DELIVERIES = 50
# The new secret waits in the (server-side) session for the page the
# registration redirects to, which shows it once.
JUST_REGISTERED = "webhooks.just_registered"


def _require_staff(request: HttpRequest) -> None:
    if not can_administer(request.user):
        raise PermissionDenied("Webhooks are managed by staff.")


def _refuse(form: WebhookForm, refusal: InvalidInput) -> None:
    """Put the service's refusal on the fields it names, so the form shows
    it beside what was typed."""
    fields = refusal.extra.get("fields") or {}
    for name, field_messages in fields.items():
        for message in field_messages:
            form.add_error(name if name in form.fields else None, message)
    if not fields:
        form.add_error(None, refusal.detail)


@require_http_methods(["GET", "POST"])
@login_required
def webhooks(request: HttpRequest) -> HttpResponse:
    """Registering answers with a redirect (POST/redirect/GET), so a refresh
    of the page that follows cannot register the URL again."""
    _require_staff(request)
    form = WebhookForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        with page_errors(request):
            try:
                registered = webhook_register(user=request.user, **form.cleaned_data)
            except InvalidInput as refusal:
                _refuse(form, refusal)
            else:
                request.session[JUST_REGISTERED] = registered.secret
                messages.success(request, "Webhook registered.")
                return redirect("review:webhooks")
    context = {
        "form": form,
        "new_secret": request.session.pop(JUST_REGISTERED, None),
        "rows": Webhook.objects.order_by("-id"),
        "deliveries": WebhookDelivery.objects.select_related("webhook", "event").order_by("-id")[
            :RECENT_DELIVERIES
        ],
        "active_page": "webhooks",
    }
    return render(request, "review_app/webhooks.html", context, status=400 if form.errors else 200)


@require_POST
@login_required
def webhook_toggle(request: HttpRequest, webhook_id: int) -> HttpResponse:
    _require_staff(request)
    webhook = Webhook.objects.filter(pk=webhook_id).first()
    if webhook is None:
        raise Http404("No such webhook.")
    webhook_set_active(user=request.user, webhook=webhook, active=not webhook.active)
    return redirect("review:webhooks")
