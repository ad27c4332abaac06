"""Shared by the eval script and its CI slice: load the set, rank, score."""

from dataclasses import dataclass

from benchmarks.eval.dataset import EvalMemory, EvalQuery
from benchmarks.eval.hard import HardMemory, HardQuery
from benchmarks.eval.metrics import ndcg_at, recall_at, reciprocal_rank

STORE = "workspace_runbooks"


@dataclass(frozen=True)
class Scores:
    recall_at_5: float
    mrr: float
    ndcg_at_10: float

    def __str__(self) -> str:
        return f"recall@5 {self.recall_at_5:.3f}  MRR {self.mrr:.3f}  nDCG@10 {self.ndcg_at_10:.3f}"


def load_memories(rows: list[EvalMemory]) -> dict:
    """Reviewed runbook memories in a workspace store; returns path → eval id."""
    from memory_app.embeddings import document_text, get_backend
    from memory_app.models import Trust
    from memory_app.services.documents import document_create
    from memory_app.services.stores import store_workspace_ensure

    store = store_workspace_ensure(slug=STORE, name="Runbooks")
    vectors = get_backend().embed([document_text(r.title, "", r.content) for r in rows])
    for row, vector in zip(rows, vectors, strict=True):
        document_create(
            store=store,
            path=f"eval/{row.id}",
            title=row.title,
            content=row.content,
            doc_type=row.doc_type,
            trust=Trust.ADMIN_APPROVED,
            author=None,
            entities={"service": row.service},
            tags=[row.service, row.topic],
            embedding=vector,
        )
    return {f"eval/{row.id}": row.id for row in rows}


def evaluate(actor, query_rows: list[EvalQuery], ids_by_path: dict, mode: str) -> Scores:
    from memory_app.selectors.search import memory_search

    recalls, ranks, ndcgs = [], [], []
    for query in query_rows:
        hits = memory_search(actor=actor, query=query.text, limit=10, mode=mode)
        ranked = [ids_by_path.get(hit.document.path, "") for hit in hits]
        recalls.append(recall_at(ranked, query.relevant, 5))
        ranks.append(reciprocal_rank(ranked, query.relevant))
        ndcgs.append(ndcg_at(ranked, query.relevant, 10))
    n = len(query_rows)
    return Scores(sum(recalls) / n, sum(ranks) / n, sum(ndcgs) / n)


KINDS = ("sentence", "paraphrase", "identifier", "multihop", "temporal", "dated", "no_answer")
MODES = ("text", "semantic", "hybrid")


@dataclass(frozen=True)
class KindScores:
    """Ranking scores of one kind; for no-answer questions, how often nothing came back.

    `returned` is the mean number of hits (of 10 asked for).
    """

    n: int
    recall_at_5: float
    recall_at_10: float
    mrr: float
    ndcg_at_10: float
    empty: float
    returned: float

    def row(self) -> str:
        return (
            f"{self.n:>4}  {self.recall_at_5:.3f}  {self.recall_at_10:.3f}  "
            f"{self.mrr:.3f}  {self.ndcg_at_10:.3f}  {self.empty:.2f}  {self.returned:4.1f}"
        )


def load_hard(rows: list[HardMemory]) -> dict:
    """Each tenant's memories into that user's own store, dated as the set says.

    Returns tenant → (actor, path → memory id).
    """
    from django.utils import timezone

    from memory_app.actors import actor_for
    from memory_app.embeddings import document_text, get_backend
    from memory_app.models import MemoryDocument, Trust
    from memory_app.services.documents import document_create
    from memory_app.services.principals import principal_upsert
    from memory_app.services.stores import store_for_user

    now = timezone.now()
    tenants: dict = {}
    vectors = get_backend().embed([document_text(r.title, "", r.content) for r in rows])
    for row, vector in zip(rows, vectors, strict=True):
        if row.tenant not in tenants:
            user = principal_upsert(username=row.tenant)
            tenants[row.tenant] = (actor_for(user), {}, store_for_user(user=user))
        _, paths, store = tenants[row.tenant]
        path = f"eval/{row.id}"
        document = document_create(
            store=store,
            path=path,
            title=row.title,
            content=row.content,
            doc_type=row.doc_type,
            trust=Trust.USER_AUTHORED,
            author=None,
            entities=row.entities,
            embedding=vector,
        )
        paths[path] = row.id
        when = _when(row, now)
        if when is not None:
            MemoryDocument.objects.filter(pk=document.pk).update(created_at=when, updated_at=when)
    analyze()
    return {tenant: (actor, paths) for tenant, (actor, paths, _) in tenants.items()}


def analyze() -> None:
    """Column statistics as a running install has them (autovacuum gathers
    them soon after a load): the lexical side reads them to tell common
    terms from rare ones, and the evaluation must not depend on whether
    autovacuum came by before its questions."""
    from django.db import connection

    from memory_app.models import DocumentTerms, MemoryDocument

    with connection.cursor() as cursor:
        for model in (MemoryDocument, DocumentTerms):
            cursor.execute(f"ANALYZE {model._meta.db_table}")


def _when(row: HardMemory, now):
    from datetime import UTC, datetime, timedelta

    if row.date:
        return datetime.fromisoformat(row.date).replace(hour=12, tzinfo=UTC)
    if row.age_days is not None:
        return now - timedelta(days=row.age_days)
    return None


def evaluate_hard(tenants: dict, query_rows: list[HardQuery], mode: str) -> dict[str, KindScores]:
    """Scores per query kind (and "all" over the answerable ones) for one mode."""
    from memory_app.selectors.search import memory_search

    ranked = {}
    for query in query_rows:
        actor, paths = tenants[query.tenant]
        hits = memory_search(actor=actor, query=query.text, limit=10, mode=mode)
        ranked[query.id] = [paths.get(hit.document.path, "") for hit in hits]
    return score_kinds(query_rows, ranked)


def score_kinds(query_rows: list[HardQuery], ranked: dict[str, list[str]]) -> dict[str, KindScores]:
    """Each kind's mean scores for the ranked ids of each question (by question id)."""
    per_kind: dict[str, list[tuple]] = {}
    for query in query_rows:
        found = ranked[query.id]
        if query.relevant:
            measured = (
                recall_at(found, query.relevant, 5),
                recall_at(found, query.relevant, 10),
                reciprocal_rank(found, query.relevant),
                ndcg_at(found, query.relevant, 10),
                0.0,
                len(found),
            )
        else:
            measured = (0.0, 0.0, 0.0, 0.0, float(not found), len(found))
        per_kind.setdefault(query.kind, []).append(measured)
        if query.relevant:
            per_kind.setdefault("all", []).append(measured)
    return {kind: _mean(values) for kind, values in per_kind.items()}


def _mean(values: list[tuple]) -> KindScores:
    n = len(values)
    return KindScores(n, *(sum(column) / n for column in zip(*values, strict=True)))
