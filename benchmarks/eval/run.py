"""Shared by the eval script and its CI slice: load the set, rank, score."""

from dataclasses import dataclass

from benchmarks.eval.dataset import EvalMemory, EvalQuery
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
