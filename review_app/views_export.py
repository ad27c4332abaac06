"""The admin download of memory_export: every store, every version, every decision."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, StreamingHttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from memory_app.models import MemoryDocument
from memory_app.permissions import can_export_everything
from memory_app.services.events import event_record
from memory_app.services.export import export_lines


@require_GET
@login_required
def export_download(request: HttpRequest) -> StreamingHttpResponse:
    if not can_export_everything(request.user):
        raise PermissionDenied("Only administrators may download the whole memory.")
    event_record("memory.exported", principal=request.user, payload={"via": "download"})
    name = f"agent-memory-{timezone.now():%Y%m%d-%H%M%S}.jsonl"
    response = StreamingHttpResponse(
        (line + "\n" for line in export_lines(MemoryDocument.objects.all())),
        content_type="application/x-ndjson; charset=utf-8",
    )
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
