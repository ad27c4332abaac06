"""The audit of one memory_context turn, written in one round trip.

A trace (every candidate), the `memory.context.loaded` event and a usage row
per injected document go in as one statement of data-modifying CTEs: the
event names the trace and the usage rows name both, so done one by one
they cost four round trips on the hot path. Durable like any other
statement of its transaction; synchronous_commit is off for it only (a
crash may lose the last moment's traces, never a document or a version).
"""

import json
from dataclasses import dataclass

from django.db import connection

from memory_app.models import ContextTrace, MemoryEvent, MemoryUsage

_SQL = f"""
WITH durability AS (SELECT set_config('synchronous_commit', 'off', true)),
trace AS (
    INSERT INTO {ContextTrace._meta.db_table}
        (principal_id, conversation_id, run_id, message_sha256, candidates,
         context_sha256, tokens, token_budget, created_at)
    SELECT %(principal)s, %(conversation)s, %(run)s, %(message_sha256)s, %(candidates)s::jsonb,
           %(context_sha256)s, %(tokens)s, %(budget)s, now()
    FROM durability
    RETURNING id
),
event AS (
    INSERT INTO {MemoryEvent._meta.db_table}
        (type, principal_id, conversation_id, document_id, payload, created_at)
    SELECT 'memory.context.loaded', %(agent)s, %(conversation)s, NULL,
           jsonb_build_object('trace_id', trace.id) || %(payload)s::jsonb, now()
    FROM trace
    RETURNING id
),
usage AS (
    INSERT INTO {MemoryUsage._meta.db_table}
        (run_id, conversation_id, principal_id, document_id, version, rank, score,
         components, block, tokens, hit, trace_id, event_id, created_at)
    SELECT %(run)s, %(conversation)s, %(principal)s, u.document_id, u.version, u.rank, u.score,
           u.components, u.block, u.tokens, false, trace.id, event.id, now()
    FROM trace, event, jsonb_to_recordset(%(usages)s::jsonb) AS u(
        document_id uuid, version integer, rank integer, score double precision,
        components jsonb, block text, tokens integer)
)
SELECT trace.id, event.id FROM trace, event
"""  # noqa: S608 - table names from the models; every value is a parameter


@dataclass(frozen=True)
class AuditRow:
    document_id: str
    version: int
    score: float
    components: dict
    block: str
    tokens: int


def context_audit_write(
    *,
    principal_id: int,
    agent_id: int,
    conversation_id: int | None,
    run_id: str,
    message_sha256: str,
    context_sha256: str,
    candidates: list[dict],
    tokens: int,
    budget: int,
    payload: dict,
    rows: list[AuditRow],
) -> tuple[int, int]:
    """Insert the trace, the event and the usage rows; returns (trace id, event id)."""
    usages = [
        {**row.__dict__, "document_id": str(row.document_id), "rank": rank}
        for rank, row in enumerate(rows, start=1)
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            _SQL,
            {
                "principal": principal_id,
                "agent": agent_id,
                "conversation": conversation_id,
                "run": run_id,
                "message_sha256": message_sha256,
                "context_sha256": context_sha256,
                "candidates": json.dumps(candidates),
                "tokens": tokens,
                "budget": budget,
                "payload": json.dumps(payload),
                "usages": json.dumps(usages),
            },
        )
        trace_id, event_id = cursor.fetchone()
    return trace_id, event_id
