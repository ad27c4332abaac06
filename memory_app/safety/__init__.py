"""The safety scanner: every write is scanned before it is stored (DESIGN §3).

`scan_fields` normalises each field (NFKC; zero-width and bidi controls
removed) and runs every registered detector over it. Findings name the
detector, the field and the span in the normalised text — never the matched
text, so nothing secret reaches a response, a log or an event.
"""

from memory_app.safety.registry import SCANNER_VERSION, Finding, prepare, scan_fields

__all__ = ["SCANNER_VERSION", "Finding", "prepare", "scan_fields"]
