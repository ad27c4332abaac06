"""Server-side render time of the review pages at a busy install's scale.

    .venv/bin/python benchmarks/render_bench.py [--pending 1000] [--versions 50] [--repeat 200]

Loads `--pending` conversation drafts, each proposed for promotion into the
workspace runbooks (a third of them onto paths that already hold a reviewed
document, so the queue shows real diffs), a document with `--versions`
versions, and then renders through Django's full request stack (sessions,
auth, CSRF, middleware, templates) with the test client, which is what a
worker does minus the socket. The tables are analysed after loading, as
autovacuum would have done by then on a live install. Prints p50/p95/p99
per page, the same percentiles of this process's CPU time per render (the
database server's work is not in it, nor time spent waiting for a core),
the queries and database time of one render (what is left is Python:
templates, diffs), and the machine's load average, since a busy machine
slows every figure. Only the pages' URLs and a logged-in reviewer are
assumed.
"""

import argparse
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import percentiles, setup_django, timed, timed_with_cpu
from benchmarks.loading import bulk_load, bulk_pending_promotions

PARAGRAPH = (
    "Check the consumer lag dashboard, then scale the group to the partition count. "
    "If lag keeps growing, pause the producer and page the on-call owner."
)


def build(pending: int, versions: int, rng: random.Random):
    from django.db import transaction

    from memory_app.models import MemoryDocument, Trust
    from memory_app.services.conversations import conversation_open
    from memory_app.services.documents import document_create, head_update
    from memory_app.services.principals import principal_upsert
    from memory_app.services.stores import store_workspace_ensure

    reviewer = principal_upsert(username="bench-reviewer", reviewer=True)
    agent = principal_upsert(username="bench-agent", service_account=True)
    target = store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")
    conversations = [
        conversation_open(user=agent, external_id=f"conv-{n}").store for n in range(100)
    ]
    plan = [(rng.choice(conversations), Trust.AGENT_DRAFT) for _ in range(pending)]
    bulk_load(plan, agent, rng, embed=False)
    drafts = list(MemoryDocument.objects.filter(trust=Trust.AGENT_DRAFT).order_by("created_at"))
    for draft in drafts[::3]:
        document_create(
            store=target,
            path=draft.path,
            title=draft.title,
            content=draft.content.replace(". ", ".\n", 2) + "\nReviewed last quarter.",
            trust=Trust.ADMIN_APPROVED,
            author=reviewer,
        )
    bulk_pending_promotions(drafts, target, agent)

    long_lived = document_create(
        store=target,
        path="runbooks/kafka/consumer-lag",
        title="Kafka consumer lag",
        content=PARAGRAPH,
        trust=Trust.ADMIN_APPROVED,
        author=reviewer,
    )
    for number in range(2, versions + 1):
        with transaction.atomic():
            head_update(
                MemoryDocument.objects.select_for_update().get(pk=long_lived.pk),
                change="update",
                author=reviewer,
                fields={
                    "content": "\n\n".join([PARAGRAPH] * (1 + number % 6)) + f"\nRev {number}."
                },
            )
    return reviewer, target, long_lived


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pending", type=int, default=1000)
    parser.add_argument("--versions", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    setup_django()

    from django.conf import settings
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    reviewer, target, document = build(args.pending, args.versions, random.Random(5))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    client = Client()
    client.force_login(reviewer)
    pages = [
        ("queue, first page", "/queue/"),
        ("queue, page 20", "/queue/?page=20"),
        ("document, latest diff", f"/documents/{document.pk}/"),
        (
            f"document, diff v1 to v{args.versions}",
            f"/documents/{document.pk}/?from=1&to={args.versions}",
        ),
        ("browser, all stores", "/browser/"),
        ("browser, one store", f"/browser/?store={target.pk}"),
    ]
    print(f"{args.pending} pending items, a {args.versions}-version document")
    print("load average before: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    for label, url in pages:

        def render(url=url) -> None:
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)

        timed(render, 10)
        with CaptureQueriesContext(connection) as captured:
            render()
        # Read at once: the next request clears the connection's query log.
        queries = captured.captured_queries
        sql_ms = sum(float(query["time"]) for query in queries) * 1000
        wall, cpu = timed_with_cpu(render, args.repeat)
        print(f"{label:<28} {percentiles(wall)}")
        print(f"{'':<28} CPU {percentiles(cpu)}")
        print(f"{'':<28} {len(queries)} queries, {sql_ms:.1f} ms in the database")
    print("load average after: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
