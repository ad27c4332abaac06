"""Webhook URLs as the pages show them: without the credentials a URL can
carry (memory_app/webhooks/addresses.py)."""

from django import template

from memory_app.webhooks.addresses import masked_url

register = template.Library()
register.filter("masked_url", masked_url)
