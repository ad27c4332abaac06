from django.urls import path

from review_app import (
    views,
    views_browser,
    views_deletions,
    views_documents,
    views_dreams,
    views_export,
    views_queue,
)

app_name = "review"

urlpatterns = [
    path("", views.home, name="home"),
    path("queue/", views_queue.queue, name="queue"),
    path("queue/count", views_queue.queue_count, name="queue-count"),
    path("queue/bulk", views_queue.decide_bulk, name="queue-bulk"),
    path("queue/<uuid:item_id>/decide", views_queue.decide, name="queue-decide"),
    path("browser/", views_browser.browser, name="browser"),
    path("dreams/", views_dreams.dreams, name="dreams"),
    path("export/memory.jsonl", views_export.export_download, name="export"),
    path("dreams/run", views_dreams.dream_run, name="dream-run"),
    path("deletions/", views_deletions.deletions, name="deletions"),
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
    path("<slug:slug>/", views.not_built, name="page"),
]
