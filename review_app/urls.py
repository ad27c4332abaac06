from django.urls import path

from review_app import (
    views,
    views_browser,
    views_counts,
    views_deletions,
    views_documents,
    views_dreams,
    views_events,
    views_export,
    views_mine,
    views_queue,
    views_systems,
    views_teams,
    views_usage,
    views_webhooks,
)

app_name = "review"

urlpatterns = [
    path("", views.home, name="home"),
    path("queue/", views_queue.queue, name="queue"),
    path("queue/count", views_counts.queue_count, name="queue-count"),
    path("queue/bulk", views_queue.decide_bulk, name="queue-bulk"),
    path("queue/<uuid:item_id>/decide", views_queue.decide, name="queue-decide"),
    path("queue/<uuid:item_id>/content", views_queue.proposal, name="queue-content"),
    path("browser/", views_browser.browser, name="browser"),
    path("browser/<int:store_id>/add", views_browser.browser_add, name="browser-add"),
    path("dreams/", views_dreams.dreams, name="dreams"),
    path("systems/", views_systems.systems, name="systems"),
    path("systems/<slug:slug>/", views_systems.system_card, name="system"),
    path("systems/<slug:slug>/add", views_systems.system_memory_add, name="system-add"),
    path(
        "systems/<slug:slug>/<uuid:document_id>/",
        views_systems.system_memory_act,
        name="system-act",
    ),
    path("usage/", views_usage.usage, name="usage"),
    path("usage/traces/<int:trace_id>/", views_usage.trace_detail, name="trace"),
    path("events/", views_events.events, name="events"),
    path("teams/", views_teams.teams, name="teams"),
    path("teams/grants", views_teams.grant_add, name="grant-add"),
    path("teams/grants/<int:grant_id>/remove", views_teams.grant_remove, name="grant-remove"),
    path("teams/<int:team_id>/policy", views_teams.team_policy, name="team-policy"),
    path("webhooks/", views_webhooks.webhooks, name="webhooks"),
    # The wanted state is posted (`active`); the address is kept from when it flipped.
    path("webhooks/<int:webhook_id>/toggle", views_webhooks.webhook_state, name="webhook-state"),
    path("mine/", views_mine.mine, name="mine"),
    path("mine/add", views_mine.mine_add, name="mine-add"),
    path("mine/<uuid:document_id>/", views_mine.mine_act, name="mine-act"),
    path("export/memory.jsonl", views_export.export_download, name="export"),
    path("dreams/run", views_dreams.dream_run, name="dream-run"),
    path("deletions/", views_deletions.deletions, name="deletions"),
    path("deletions/count", views_counts.deletion_count, name="deletions-count"),
    path(
        "deletions/<uuid:item_id>/decide",
        views_deletions.deletion_decide_view,
        name="deletion-decide",
    ),
    path("documents/<uuid:document_id>/", views_documents.document_page, name="document"),
    path(
        "documents/<uuid:document_id>/curate",
        views_documents.document_curate,
        name="document-curate",
    ),
    path(
        "documents/<uuid:document_id>/redact",
        views_documents.document_redact_page,
        name="document-redact",
    ),
]
