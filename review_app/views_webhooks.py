"""Webhooks, for staff: register an endpoint, switch it off or on, and see
each delivery's status (memory_app/webhooks/)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import add_never_cache_headers

from memory_app.errors import InvalidInput
from memory_app.models import Webhook, WebhookDelivery
from memory_app.permissions import can_administer
from memory_app.webhooks.addresses import masked_url
from memory_app.webhooks.services import webhook_register, webhook_set_active
from review_app.errors import page_errors
from review_app.forms import WebhookForm, WebhookStateForm
from review_app.methods import allow, post_only

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


@allow("GET", "HEAD", "POST")
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
    # Shown once, to a GET: a HEAD (a link checker) would use up the showing.
    new_secret = request.session.pop(JUST_REGISTERED, None) if request.method == "GET" else None
    context = {
        "form": form,
        "new_secret": new_secret,
        "rows": Webhook.objects.order_by("-id"),
        "deliveries": WebhookDelivery.objects.select_related("webhook", "event").order_by("-id")[
            :RECENT_DELIVERIES
        ],
        "active_page": "webhooks",
    }
    response = render(
        request, "review_app/webhooks.html", context, status=400 if form.errors else 200
    )
    if new_secret:
        # Shown once: Back, the history and caches must not show it again.
        add_never_cache_headers(response)
    return response


@post_only("review:webhooks")
@login_required
def webhook_state(request: HttpRequest, webhook_id: int) -> HttpResponse:
    """Switch a webhook on or off: the state wanted is posted, so the same
    form sent twice (a double click, a stale tab) never switches it back."""
    _require_staff(request)
    webhook = Webhook.objects.filter(pk=webhook_id).first()
    if webhook is None:
        raise Http404("No such webhook.")
    form = WebhookStateForm(request.POST)
    form.is_valid()  # a boolean that is not required always is
    active = form.cleaned_data["active"]
    changed = webhook_set_active(user=request.user, webhook=webhook, active=active)
    state, shown = ("on" if active else "off"), masked_url(webhook.url)
    if changed:
        messages.success(request, f"Webhook {shown} switched {state}.")
    else:
        messages.info(request, f"Webhook {shown} was already {state}; nothing changed.")
    return redirect("review:webhooks")
