"""Webhooks, for staff: register an endpoint, switch it off or on, and see
each delivery's status (memory_app/webhooks/)."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from memory_app.models import Webhook, WebhookDelivery
from memory_app.permissions import can_administer
from memory_app.webhooks.services import webhook_register, webhook_set_active
from review_app.errors import page_errors
from review_app.forms import WebhookForm

RECENT_DELIVERIES = 50


def _require_staff(request: HttpRequest) -> None:
    if not can_administer(request.user):
        raise PermissionDenied("Webhooks are managed by staff.")


@require_http_methods(["GET", "POST"])
@login_required
def webhooks(request: HttpRequest) -> HttpResponse:
    _require_staff(request)
    form = WebhookForm(request.POST or None)
    new_secret = None
    if request.method == "POST" and form.is_valid():
        with page_errors(request):
            new_secret = webhook_register(user=request.user, **form.cleaned_data).secret
            form = WebhookForm()
    context = {
        "form": form,
        "new_secret": new_secret,
        "rows": Webhook.objects.order_by("-id"),
        "deliveries": WebhookDelivery.objects.select_related("webhook", "event").order_by("-id")[
            :RECENT_DELIVERIES
        ],
        "active_page": "webhooks",
    }
    return render(request, "review_app/webhooks.html", context)


@require_POST
@login_required
def webhook_toggle(request: HttpRequest, webhook_id: int) -> HttpResponse:
    _require_staff(request)
    webhook = Webhook.objects.filter(pk=webhook_id).first()
    if webhook is None:
        raise Http404("No such webhook.")
    webhook_set_active(user=request.user, webhook=webhook, active=not webhook.active)
    return redirect("review:webhooks")
