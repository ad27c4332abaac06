"""The hard retrieval evaluation: long conversations, sentence questions, no-answer.

Two parts, each tenant a user whose own store holds hundreds of memories:

* **ops** (written here): the 300 runbook/incident memories of dataset.py
  for one engineer, plus conversation turns that talk about the same
  services and topics without holding the answer (hard near-topic
  negatives), plus dated change notes. Questions are whole sentences in
  six kinds: `sentence` (the engineer's words inside a question),
  `paraphrase`, `identifier` (a ticket or deployment name in a sentence),
  `multihop` (two memories hold the answer), `temporal` ("what did we change
  on X last week"), and `no_answer` (topics no memory covers).
* **public** (optional): the long-conversation memory corpus in
  `MEMORY_EVAL_CORPUS` (JSON Lines `memories.jsonl`/`queries.jsonl`; see
  docs/benchmarks.md), one tenant per speaker, every conversation turn a
  memory dated by its session; its questions name the session's date
  (`dated`). Absent corpus, absent part: nothing of it is in this repository.
"""

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from benchmarks.eval.dataset import SERVICES, TOPICS, _ticket, memories

REPO = Path(__file__).resolve().parents[2]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpora" / "retrieval"


@dataclass(frozen=True)
class HardMemory:
    id: str
    tenant: str
    title: str
    content: str
    doc_type: str = "note"
    # Age in days when the set is loaded; None keeps the load time.
    age_days: float | None = None
    # A fixed date (public corpus sessions), ISO; wins over age_days.
    date: str | None = None
    entities: dict = field(default_factory=dict)


@dataclass(frozen=True)
class HardQuery:
    id: str
    tenant: str
    text: str
    relevant: tuple[str, ...]
    kind: str


SENTENCE_TEMPLATES = [
    "We are seeing {exact} again on {svc}; what did we do about it last time?",
    "Do you remember how we handled {exact} for {svc}?",
    "I think {svc} had this before, something about {exact}, what was the fix?",
]
PARAPHRASE_TEMPLATES = [
    "Can you remind me what to do when {para}?",
    "Last time {para}, what did we find?",
]
IDENTIFIER_TEMPLATES = [
    "What was the root cause in {ticket} and how did we close it?",
    "Could you pull up what we wrote down for {ticket}?",
]
DEPLOY_TEMPLATES = [
    "What do we know about {topic_words} on {deploy}?",
]
MULTIHOP = [
    ("pool", "owner", "{svc} ran out of database connections, how do I fix it and whom do I page?"),
    (
        "tls",
        "verify",
        "After reissuing the {svc} certificate, how do I check the release went well?",
    ),
    (
        "lag",
        "autoscale",
        "{svc} consumers fall behind; what are the Kafka settings and how does it scale?",
    ),
    ("oom", "logs", "{svc} pods got OOMKilled; where do I read their logs to find out why?"),
    ("secret", "owner", "Who owns {svc} and how do we rotate its credentials?"),
]
CHANGES = [
    # (days ago, what changed); questions ask by the periods of `change_periods`.
    # Whatever the day they are asked, each period holds one to four of
    # them, so all its answers fit in the first five; the conversation
    # turns of the last three weeks share the periods.
    (1, "raised the worker concurrency from 4 to 8"),
    (3, "enabled gzip on the internal endpoints"),
    (24, "added a circuit breaker around the partner client"),
    (45, "moved the health endpoint behind the internal load balancer"),
    (85, "turned off the legacy XML export"),
    (120, "doubled the connection pool of the replica client"),
    (70, "replaced the cron scheduler with the queue scheduler"),
    (100, "upgraded the JSON library"),
    (200, "turned on request hedging for reads"),
    (9, "moved the nightly export to the read replica"),
    (365, "lowered the cache TTL to five minutes"),
    (38, "switched the client to HTTP/2 keep-alive"),
    (52, "pinned the base image to the patched release"),
    (150, "renamed the alert routes to the new paging tree"),
    (300, "split the deployment into API and worker pods"),
]
CHANGE_QUESTION = "What did we change on {svc} {phrase}?"


def change_periods(today: date) -> list[tuple[str, str, Callable[[date], bool]]]:
    """(key, phrase, whether a day is in the period) for each question about a
    time, asked on `today`. Calendar periods as people mean them: last week
    is the previous Monday-to-Sunday week (and its Sunday before, where
    weeks start on Sunday), last month the previous calendar month."""
    monday = today - timedelta(days=today.weekday())
    month = today.replace(day=1)
    previous_month = (month - timedelta(days=1)).replace(day=1)
    weekday = today - timedelta(days=3)
    return [
        ("yesterday", "yesterday", lambda day: day == today - timedelta(days=1)),
        ("last-week", "last week", lambda day: monday - timedelta(days=8) <= day < monday),
        ("last-month", "last month", lambda day: previous_month <= day < month),
        ("last-7-days", "in the last 7 days", lambda day: day >= today - timedelta(days=7)),
        ("weekday", f"on {weekday:%A}", lambda day: day == weekday),
    ]


# One turn per service and topic that talks about the topic without the
# answer: the near-topic negatives a long conversation is full of.
CHATTER = [
    "User: {svc} had the {words} thing again this morning.\n"
    "Assistant: I see. Shall we look at {words} for {svc} after the release?",
    "User: Is {svc} the one with the {words} problem?\nAssistant: I am not sure; "
    "the team mentioned it but nobody wrote down what happened.",
    "User: Put {words} on {svc} on the agenda for Thursday.\nAssistant: Added to the agenda.",
    "User: {para}, is that normal?\nAssistant: It can happen; let us keep an eye on it "
    "before changing anything.",
]
NO_ANSWER = [
    "How do we configure the GPU drivers on the {svc} build agents?",
    "What is the office wifi password policy for the {svc} team's visitors?",
    "Which mobile app release added dark mode to {svc}?",
    "How many story points did the {svc} team deliver in the last sprint?",
]


def _topic_words(topic) -> str:
    words = topic.title.split(": ", 1)[1]
    return words.lower()


def ops_set(services=SERVICES, topics=TOPICS) -> tuple[list[HardMemory], list[HardQuery]]:
    from django.utils import timezone

    tenant = "ops"
    now = timezone.localtime()
    rows: list[HardMemory] = []
    queries: list[HardQuery] = []
    by_key = {t.key: t for t in topics}
    for memory in memories(services, topics):
        rows.append(
            HardMemory(
                id=memory.id,
                tenant=tenant,
                title=memory.title,
                content=memory.content,
                doc_type=memory.doc_type,
                age_days=200,
                entities={"service": memory.service},
            )
        )
    for s_index, (service, deploy) in enumerate(services):
        for t_index, topic in enumerate(topics):
            template = CHATTER[(s_index + t_index) % len(CHATTER)]
            rows.append(
                HardMemory(
                    id=f"{service}-chatter-{topic.key}",
                    tenant=tenant,
                    title=f"{service}: conversation turn",
                    content=template.format(
                        svc=service,
                        words=_topic_words(topic),
                        para=topic.paraphrase.format(svc=service),
                    ),
                    age_days=2 + (s_index + t_index) % 20,
                )
            )
        for days, change in CHANGES:
            rows.append(
                HardMemory(
                    id=f"{service}-change-{days}",
                    tenant=tenant,
                    title=f"{service}: change",
                    content=f"On {deploy} we {change}.",
                    doc_type="fact",
                    age_days=days,
                    entities={"service": service},
                )
            )
        for key, phrase, holds in change_periods(now.date()):
            queries.append(
                HardQuery(
                    f"{service}-temporal-{key}",
                    tenant,
                    CHANGE_QUESTION.format(svc=service, phrase=phrase),
                    tuple(
                        f"{service}-change-{d}"
                        for d, _ in CHANGES
                        if holds((now - timedelta(days=d)).date())
                    ),
                    "temporal",
                )
            )
        for q in range(3):
            t_index = (s_index * 3 + q * 7) % len(topics)
            topic = topics[t_index]
            relevant = (f"{service}-{topic.key}",)
            exact = topic.exact_query.format(svc=service).removeprefix(f"{service} ")
            para = topic.paraphrase.format(svc=service)
            kinds = {
                "sentence": SENTENCE_TEMPLATES[(s_index + q) % 3].format(exact=exact, svc=service),
                "paraphrase": PARAPHRASE_TEMPLATES[(s_index + q) % 2].format(para=para),
                "identifier": (
                    IDENTIFIER_TEMPLATES[(s_index + q) % 2].format(ticket=_ticket(s_index, t_index))
                    if q < 2
                    else DEPLOY_TEMPLATES[0].format(topic_words=_topic_words(topic), deploy=deploy)
                ),
            }
            for kind, text in kinds.items():
                queries.append(HardQuery(f"{service}-{kind}-{q}", tenant, text, relevant, kind))
        first, second, text = MULTIHOP[s_index % len(MULTIHOP)]
        if first in by_key and second in by_key:
            queries.append(
                HardQuery(
                    f"{service}-multihop",
                    tenant,
                    text.format(svc=service),
                    (f"{service}-{first}", f"{service}-{second}"),
                    "multihop",
                )
            )
        queries.append(
            HardQuery(
                f"{service}-none",
                tenant,
                NO_ANSWER[s_index % len(NO_ANSWER)].format(svc=service),
                (),
                "no_answer",
            )
        )
    return rows, queries


def corpus_dir() -> Path | None:
    path = Path(os.environ.get("MEMORY_EVAL_CORPUS", DEFAULT_CORPUS))
    return path if (path / "memories.jsonl").is_file() else None


def public_set(limit_tenants: int | None = None) -> tuple[list[HardMemory], list[HardQuery]]:
    """The public long-conversation corpus, if present; every tenant a user."""
    path = corpus_dir()
    if path is None:
        return [], []
    rows = [json.loads(line) for line in (path / "memories.jsonl").open()]
    tenants = sorted({row["user"] for row in rows})[:limit_tenants]
    memories_out = [
        HardMemory(
            id=row["id"],
            tenant=_tenant(row["user"]),
            title="Conversation turn",
            content=row["text"],
            date=row["created_at"],
        )
        for row in rows
        if row["user"] in tenants
    ]
    queries_out = [
        HardQuery(
            row["id"], _tenant(row["user"]), row["query"], tuple(row["relevant_ids"]), "dated"
        )
        for row in map(json.loads, (path / "queries.jsonl").open())
        if row["user"] in tenants
    ]
    return memories_out, queries_out


def _tenant(name: str) -> str:
    return "pub-" + name.lower().replace(" ", "-")


def split(query_rows: list[HardQuery]) -> tuple[list[HardQuery], list[HardQuery]]:
    """Dev and held-out halves: every other service (ops) or speaker (public)."""
    services = [service for service, _ in SERVICES]
    speakers = sorted({q.tenant for q in query_rows if q.tenant.startswith("pub-")})

    def group(query: HardQuery) -> int:
        if query.tenant in speakers:
            return speakers.index(query.tenant)
        return services.index(query.id.split("-", 1)[0])

    dev = [q for q in query_rows if group(q) % 2 == 0]
    return dev, [q for q in query_rows if group(q) % 2 == 1]
