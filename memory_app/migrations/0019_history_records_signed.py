"""Each link of the history chain also signs the version's record.

Before, a link signed the content hash, change, actor and time only: the
title, recall hint, reason, run, the head's other fields (trust, tags, …)
and the source refs could be rewritten by whoever held a database
credential, in a version and its head alike, and the chain still verified
(hashing.record_sha256). Every history that verifies as it was signed is
signed again with its record, with the current key; one that does not
verify is left as it is, and `memory_verify` reports it. Backwards, the
same with the records left out.
"""

from collections import defaultdict

from django.db import migrations

from memory_app.hashing import (
    GENESIS,
    chain_key_current,
    chain_keyring,
    chain_sha256,
    record_sha256,
    sha256_text,
)

DOCUMENTS_PER_BATCH = 500


def _link(key, previous_chain: str, row, *, record: bool) -> str:
    return chain_sha256(
        key=key,
        previous_chain=previous_chain,
        version=row.version,
        change=row.change,
        content_sha256=row.sha256,
        author_name=row.author_name,
        created_at=row.created_at,
        record_sha256=_record(row) if record else None,
    )


def _record(row) -> str:
    return record_sha256(
        title=row.title,
        recall_hint=row.recall_hint,
        reason=row.reason,
        run_id=row.run_id,
        metadata=row.metadata,
        source_refs=row.refs,
    )


def _intact(rows, keyring, *, record: bool) -> bool:
    previous_chain, previous_sha = GENESIS, ""
    for number, row in enumerate(rows, start=1):
        key = keyring.get(row.chain_key_id)
        if (
            key is None
            or row.version != number
            or sha256_text(row.content) != row.sha256
            or row.parent_sha256 != previous_sha
            or _link(key, previous_chain, row, record=record) != row.chain_sha256
        ):
            return False
        previous_chain, previous_sha = row.chain_sha256, row.sha256
    return True


def _signed_again(rows, key, *, record: bool) -> list[tuple[int, str]]:
    """(version id, new link) of each row, signed with or without its record."""
    links, previous_chain = [], GENESIS
    for row in rows:
        previous_chain = _link(key, previous_chain, row, record=record)
        links.append((row.pk, previous_chain))
    return links


def _histories(MemoryVersion, MemorySourceRef):
    """Each document's versions, oldest first, each with its source refs as
    `refs` (read apart: a historical model has no reverse accessor when a
    migration is unapplied)."""
    document_ids = list(
        MemoryVersion.objects.order_by("document_id")
        .values_list("document_id", flat=True)
        .distinct()
    )
    for start in range(0, len(document_ids), DOCUMENTS_PER_BATCH):
        batch = document_ids[start : start + DOCUMENTS_PER_BATCH]
        refs: dict[int, list[tuple[str, str]]] = defaultdict(list)
        for version_id, kind, ref in MemorySourceRef.objects.filter(
            version__document_id__in=batch
        ).values_list("version_id", "kind", "ref"):
            refs[version_id].append((kind, ref))
        rows = MemoryVersion.objects.filter(document_id__in=batch).order_by(
            "document_id", "version"
        )
        history: list = []
        for row in rows:
            row.refs = refs[row.pk]
            if history and history[0].document_id != row.document_id:
                yield history
                history = []
            history.append(row)
        if history:
            yield history


def _resign(apps, schema_editor, *, record: bool) -> None:
    MemoryVersion = apps.get_model("memory_app", "MemoryVersion")
    MemorySourceRef = apps.get_model("memory_app", "MemorySourceRef")
    if not MemoryVersion.objects.exists():
        return
    keyring, key = chain_keyring(), chain_key_current()
    links, left = [], 0
    for rows in _histories(MemoryVersion, MemorySourceRef):
        if _intact(rows, keyring, record=record):
            continue
        if _intact(rows, keyring, record=not record):
            links += _signed_again(rows, key, record=record)
        else:
            left += 1
    if left:
        # A migration has no other voice: memory_verify names each of them.
        print(
            f"\n  {left} history chain(s) do not verify and were left as they are;"
            " `manage.py memory_verify` names them (a retired key missing from"
            " MEMORY_CHAIN_RETIRED_KEYS, or a tampering)."
        )
    if not links:
        return
    schema_editor.execute("SELECT set_config('memory.history_rewrite', 'on', true)")
    table = MemoryVersion._meta.db_table
    for start in range(0, len(links), 5000):
        ids, chains = zip(*links[start : start + 5000], strict=True)
        schema_editor.execute(
            f"UPDATE {table} AS v SET chain_sha256 = n.chain, chain_key_id = %s"
            " FROM unnest(%s::bigint[], %s::text[]) AS n(id, chain) WHERE v.id = n.id",
            [key.id, list(ids), list(chains)],
        )
    schema_editor.execute("SELECT set_config('memory.history_rewrite', 'off', true)")


def sign_records(apps, schema_editor):
    _resign(apps, schema_editor, record=True)


def unsign_records(apps, schema_editor):
    _resign(apps, schema_editor, record=False)


class Migration(migrations.Migration):
    dependencies = [("memory_app", "0018_dreamjob_attempts")]

    operations = [migrations.RunPython(sign_records, unsign_records)]
