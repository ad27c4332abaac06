"""Which function runs each kind of dream job."""

from memory_app.dreams.canary import canary
from memory_app.dreams.compact import compact
from memory_app.dreams.consolidate import consolidate
from memory_app.dreams.contradictions import contradictions
from memory_app.dreams.lifecycle import expire, rotate
from memory_app.dreams.upkeep import embed, rescan
from memory_app.dreams.usage import usage
from memory_app.models import DreamKind

KINDS = {
    DreamKind.CONSOLIDATE: consolidate,
    DreamKind.COMPACT: compact,
    DreamKind.CONTRADICTIONS: contradictions,
    DreamKind.EXPIRE: expire,
    DreamKind.ROTATE: rotate,
    DreamKind.EMBED: embed,
    DreamKind.RESCAN: rescan,
    DreamKind.CANARY: canary,
    DreamKind.USAGE: usage,
}
