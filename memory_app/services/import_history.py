"""Whether an exported document's history verifies here, as memory_verify
checks a history in the database: its links, under this instance's keyring,
and its head against its last version."""

from django.utils.dateparse import parse_datetime

from memory_app.hashing import GENESIS, chain_keyring, chain_sha256, record_sha256, sha256_text
from memory_app.selectors.chain import head_differences


def history_problem(line: dict) -> str:
    """Why a document line's history does not verify, or ''.

    Links verify with this instance's keyring: importing from an instance
    with another chain key needs that key in MEMORY_CHAIN_RETIRED_KEYS.
    A file exported before links signed the version's record verifies as
    it was signed (`signed_without_records`); the import signs it again in
    full. The head must be what its last version recorded, as memory_verify
    checks it here.
    """
    problem = _links_problem(line, records=True)
    if problem and not _links_problem(line, records=False):
        problem = ""
    if problem:
        return problem
    last = line["versions"][-1]
    if last["version"] != line["version"]:
        return "the head is not the last version"
    if sha256_text(line["content"]) != line["content_sha256"]:
        return "the head's content does not match its hash"
    if differ := head_differences(line, last):
        return f"the head differs from its last version in {', '.join(differ)}"
    return ""


def signed_without_records(line: dict) -> bool:
    """Whether a line whose history verified was signed before links held
    the version's record (an export of an earlier release)."""
    return bool(_links_problem(line, records=True))


def _links_problem(line: dict, *, records: bool) -> str:
    """Why the line's chain of links does not verify, signed with or
    without each version's record, or ''."""
    keyring = chain_keyring()
    previous_chain, previous_sha = GENESIS, ""
    for number, version in enumerate(line["versions"], start=1):
        if version["version"] != number:
            return f"version {number} is missing"
        if sha256_text(version["content"]) != version["sha256"]:
            return f"version {number}: content does not match its hash"
        key = keyring.get(version.get("chain_key_id", ""))
        if key is None:
            return f"version {number}: signed with a chain key this instance does not hold"
        expected = chain_sha256(
            key=key,
            previous_chain=previous_chain,
            version=number,
            change=version["change"],
            content_sha256=version["sha256"],
            author_name=version["author_name"],
            created_at=parse_datetime(version["created_at"]),
            record_sha256=_version_record(version) if records else None,
        )
        if version["parent_sha256"] != previous_sha or version["chain_sha256"] != expected:
            return f"version {number}: the hash chain does not verify"
        previous_chain, previous_sha = version["chain_sha256"], version["sha256"]
    return ""


def _version_record(version: dict) -> str:
    return record_sha256(
        title=version["title"],
        recall_hint=version["recall_hint"],
        reason=version["reason"],
        run_id=version["run_id"],
        metadata=version["metadata"],
        source_refs=version["source_refs"],
    )
