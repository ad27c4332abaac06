"""The retrieval evaluation set: operations memories and judged queries.

Twenty incident/runbook topics, each written once as a template, are
instantiated for fifteen services with service-specific details (300
memories). Every memory of a topic shares its wording with fourteen
siblings, so a query must find the right topic *and* the right service.
Queries come in three kinds: exact terms an engineer would paste (a config
key, an error string), paraphrases that share almost no words with the
memory (meaning has to carry recall), and references by ticket id with a
few words around it (only exact text can tell OPS-4012 from OPS-4013). Each query's judged
relevant id is the one memory it was written for.
"""

from dataclasses import dataclass

SERVICES = [
    ("payments", "payments-api"),
    ("checkout", "checkout-web"),
    ("ledger", "ledger-writer"),
    ("search", "search-indexer"),
    ("billing", "billing-jobs"),
    ("auth", "auth-gateway"),
    ("inventory", "inventory-sync"),
    ("notifications", "notify-worker"),
    ("reporting", "report-builder"),
    ("shipping", "shipping-router"),
    ("pricing", "price-engine"),
    ("catalog", "catalog-api"),
    ("fraud", "fraud-scorer"),
    ("orders", "order-service"),
    ("accounts", "account-portal"),
]


@dataclass(frozen=True)
class Topic:
    key: str
    doc_type: str
    title: str
    content: str
    exact_query: str
    paraphrase: str


TOPICS = [
    Topic(
        "pool",
        "runbook",
        "{svc}: database connection pool exhausted",
        "{svc} ({deploy}) logs 'remaining connection slots are reserved' under load. Raise "
        "the pool from 20 to {n} and set statement_timeout=5s; check pg_stat_activity for idle "
        "in transaction sessions first.",
        "{svc} remaining connection slots are reserved",
        "{svc} can't get a database handle when traffic peaks",
    ),
    Topic(
        "oom",
        "incident",
        "{svc}: pods OOMKilled after limit change",
        "After the memory limit of {deploy} was cut to {n}Mi, pods were OOMKilled every few "
        "minutes. Restored the previous limit; heap profile showed the JSON decoder buffering "
        "whole responses.",
        "{svc} OOMKilled memory limit",
        "{svc} containers keep dying because they use too much RAM",
    ),
    Topic(
        "tls",
        "incident",
        "{svc}: TLS handshake failures after certificate renewal",
        "cert-manager renewed the certificate of {deploy} without the intermediate chain; "
        "clients failed with 'unable to get local issuer certificate'. Reissued with the full "
        "chain ({n} day validity).",
        "{svc} unable to get local issuer certificate",
        "{svc} clients refuse the secure connection since the cert was renewed",
    ),
    Topic(
        "lag",
        "runbook",
        "{svc}: Kafka consumer lag keeps growing",
        "The {deploy} consumer group falls behind during rebalance storms. Raise "
        "session.timeout.ms to 45000, keep max.poll.records at {n}, and scale consumers to the "
        "partition count.",
        "{svc} session.timeout.ms consumer lag",
        "{svc} is processing queue messages far behind real time",
    ),
    Topic(
        "dns",
        "runbook",
        "{svc}: intermittent DNS timeouts",
        "{deploy} sees 'i/o timeout' resolving internal names about {n} times an hour. Switch "
        "the pods to the node-local DNS cache and set ndots:2 in dnsConfig.",
        "{svc} dns i/o timeout ndots",
        "{svc} sometimes cannot look up other services' hostnames",
    ),
    Topic(
        "probe",
        "runbook",
        "{svc}: deploys hang at the readiness probe",
        "Rollouts of {deploy} stall because the readiness probe hits /healthz before the cache "
        "warms. Point it at /ready and lower initialDelaySeconds to {n}.",
        "{svc} readiness probe initialDelaySeconds",
        "{svc} new versions never become available during a rollout",
    ),
    Topic(
        "cron",
        "incident",
        "{svc}: scheduled job ran twice after node drain",
        "When a node was drained, two replicas of {deploy} both ran the {n}:00 job and sent "
        "duplicate emails. Added a Postgres advisory lock around the job.",
        "{svc} job ran twice advisory lock",
        "{svc} nightly task executed two times and users got duplicates",
    ),
    Topic(
        "disk",
        "runbook",
        "{svc}: volume fills up with WAL segments",
        "The volume of {deploy}'s database reached 95% because a stale replication slot kept "
        "WAL. Drop the inactive slot and set max_slot_wal_keep_size={n}GB.",
        "{svc} max_slot_wal_keep_size replication slot",
        "{svc} storage is almost full and keeps growing on the database host",
    ),
    Topic(
        "cache",
        "incident",
        "{svc}: 5xx spike on cold cache after deploy",
        "Each deploy of {deploy} flushed the Redis cache and the origin returned 503 for about "
        "{n} seconds. Warm the cache from the previous release before switching traffic.",
        "{svc} 503 cold cache redis",
        "{svc} errors right after every release until things settle",
    ),
    Topic(
        "latency",
        "incident",
        "{svc}: p99 latency doubles during the batch window",
        "Between 01:00 and 02:00 UTC the nightly batch competes with {deploy} for IOPS and p99 "
        "goes from {n}ms to twice that. Moved the batch to a read replica.",
        "{svc} p99 latency nightly batch",
        "{svc} becomes slow in the middle of the night",
    ),
    Topic(
        "rate",
        "service_pattern",
        "{svc}: upstream rate limits",
        "{deploy} calls the partner API which allows {n} requests per second; beyond that it "
        "answers 429 with Retry-After. Use the token bucket client and honour Retry-After.",
        "{svc} 429 Retry-After partner API",
        "{svc} gets throttled by the external provider",
    ),
    Topic(
        "flag",
        "checklist",
        "{svc}: feature flag rollout checklist",
        "Before enabling a flag for {deploy}: confirm the kill switch, ramp 1% → 10% → 50% → "
        "100% with {n} minutes between steps, and watch error budget burn.",
        "{svc} feature flag ramp kill switch",
        "{svc} how to turn on a new capability gradually and safely",
    ),
    Topic(
        "migration",
        "checklist",
        "{svc}: schema migration checklist",
        "For {deploy} migrations: add columns nullable, backfill in batches of {n}, deploy code "
        "reading both, then add constraints NOT VALID and validate separately.",
        "{svc} migration backfill NOT VALID constraint",
        "{svc} steps for changing database tables without downtime",
    ),
    Topic(
        "secret",
        "runbook",
        "{svc}: rotating the service credentials",
        "Credentials of {deploy} live in Vault at kv/{svc}; rotate with the two-key overlap, "
        "restart pods in waves of {n}, and revoke the old key after 24 hours.",
        "{svc} rotate credentials vault two-key",
        "{svc} procedure to change its passwords and keys",
    ),
    Topic(
        "autoscale",
        "service_pattern",
        "{svc}: autoscaling on queue depth",
        "{deploy} scales with KEDA on queue depth: one replica per {n} messages, minimum 2, "
        "maximum 40; CPU-based scaling lagged behind bursts.",
        "{svc} KEDA queue depth replicas",
        "{svc} adds more workers when the backlog grows",
    ),
    Topic(
        "verify",
        "verification",
        "{svc}: how to verify a release",
        "After a release of {deploy}: check the error rate panel, run the smoke suite "
        "(~{n} checks), and compare the p95 with the previous hour before closing the change.",
        "{svc} smoke suite error rate release verification",
        "{svc} what to look at to be sure a deploy went well",
    ),
    Topic(
        "clock",
        "incident",
        "{svc}: token validation failed from clock skew",
        "Tokens issued by {deploy} were rejected as 'not yet valid' because a node's clock "
        "drifted {n} seconds. Re-enabled chrony and allowed 30s leeway.",
        "{svc} not yet valid clock skew chrony",
        "{svc} logins rejected because machines disagree about the time",
    ),
    Topic(
        "retry",
        "service_pattern",
        "{svc}: retry storm amplifies outages",
        "{deploy} retried failed calls {n} times without jitter, tripling load on a degraded "
        "dependency. Use exponential backoff with full jitter and a retry budget.",
        "{svc} exponential backoff jitter retry budget",
        "{svc} repeated attempts made a partial outage much worse",
    ),
    Topic(
        "logs",
        "fact",
        "{svc}: where the logs are",
        "{deploy} ships logs to Loki under app={svc}; retention is {n} days, and debug logging "
        "is enabled per pod with the LOG_LEVEL env var.",
        "{svc} loki retention LOG_LEVEL",
        "{svc} where can I find its output and how long is it kept",
    ),
    Topic(
        "owner",
        "fact",
        "{svc}: ownership and escalation",
        "{deploy} is owned by the {svc}-platform team; page #{svc}-oncall, escalate to the "
        "engineering manager after {n} minutes without acknowledgement.",
        "{svc} oncall escalation owner team",
        "{svc} who do I call when it breaks",
    ),
]


@dataclass(frozen=True)
class EvalMemory:
    id: str
    service: str
    topic: str
    doc_type: str
    title: str
    content: str
    ticket: str


@dataclass(frozen=True)
class EvalQuery:
    text: str
    relevant: tuple[str, ...]
    kind: str  # exact | paraphrase | reference


def memories(services=SERVICES, topics=TOPICS) -> list[EvalMemory]:
    rows = []
    for s_index, (service, deploy) in enumerate(services):
        for t_index, topic in enumerate(topics):
            number = 10 + (s_index * 7 + t_index * 13) % 90
            fill = {"svc": service, "deploy": deploy, "n": number}
            ticket = _ticket(s_index, t_index)
            rows.append(
                EvalMemory(
                    id=f"{service}-{topic.key}",
                    service=service,
                    topic=topic.key,
                    doc_type=topic.doc_type,
                    title=topic.title.format(**fill),
                    content=f"{topic.content.format(**fill)} Tracked in {ticket}.",
                    ticket=ticket,
                )
            )
    return rows


REFERENCE_TEMPLATES = [
    "{ticket} what was the fix",
    "notes from {ticket}",
    "remind me what happened in {ticket}",
]


def _ticket(s_index: int, t_index: int) -> str:
    return f"OPS-{4000 + s_index * 37 + t_index}"


def queries(services=SERVICES, topics=TOPICS, per_service: int = 10) -> list[EvalQuery]:
    """`per_service` queries per service, rotating topics and the three kinds."""
    rows = []
    for s_index, (service, _) in enumerate(services):
        for q in range(per_service):
            t_index = (s_index * 3 + q * 7) % len(topics)
            topic = topics[t_index]
            kind = ("exact", "paraphrase", "paraphrase", "reference", "exact")[q % 5]
            if kind == "reference":
                template = REFERENCE_TEMPLATES[(s_index + q) % len(REFERENCE_TEMPLATES)]
                text = template.format(ticket=_ticket(s_index, t_index))
            else:
                template = topic.exact_query if kind == "exact" else topic.paraphrase
                text = template.format(svc=service)
            rows.append(EvalQuery(text, (f"{service}-{topic.key}",), kind))
    return rows
