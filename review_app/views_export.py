"""The admin download of memory_export: every store, every version, every decision."""

from collections.abc import Iterator

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, StreamingHttpResponse
from django.utils import timezone

from memory_app.models import MemoryDocument
from memory_app.permissions import can_export_everything
from memory_app.services.events import event_record
from memory_app.services.export import export_lines
from review_app.methods import page_view


@page_view
@login_required
def export_download(request: HttpRequest) -> StreamingHttpResponse:
    if not can_export_everything(request.user):
        raise PermissionDenied("Only administrators may download the whole memory.")
    name = f"agent-memory-{timezone.now():%Y%m%d-%H%M%S}.jsonl"
    lines: Iterator[str]
    if request.method == "HEAD":
        # What a download would be, without exporting anything (nor saying it did).
        lines = iter(())
    else:
        event_record("memory.exported", principal=request.user, payload={"via": "download"})
        lines = (line + "\n" for line in export_lines(MemoryDocument.objects.all()))
    response = StreamingHttpResponse(lines, content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
