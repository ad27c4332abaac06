"""Every agent tool, in manifest order: the core tools and the ones in their own modules."""

from memory_app.api.capture import MemoryCaptureView
from memory_app.api.tools import TOOL_VIEWS, ToolView

ALL_TOOL_VIEWS: tuple[type[ToolView], ...] = (*TOOL_VIEWS, MemoryCaptureView)
