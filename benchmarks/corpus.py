"""Realistic operations memories for loading benchmark databases."""

import random

SERVICES = [
    "payments",
    "checkout",
    "ledger",
    "ingress-nginx",
    "search",
    "billing",
    "auth",
    "inventory",
    "notifications",
    "kafka",
    "postgres-main",
    "redis-cache",
    "scheduler",
    "gateway",
    "reporting",
]
ENVIRONMENTS = ["prod", "staging", "dev"]
SYMPTOMS = [
    "pods crash-loop after a config reload",
    "p99 latency doubles during the nightly batch",
    "consumer lag grows without bound",
    "TLS handshakes fail after certificate renewal",
    "connection pool is exhausted under load",
    "disk fills up with WAL segments",
    "OOMKilled containers after the memory limit change",
    "DNS lookups time out intermittently",
    "deploys hang at the readiness probe",
    "a cron job runs twice after a node drain",
    "5xx spike when the cache is cold",
    "replication lag exceeds the alert threshold",
]
FIXES = [
    "roll back the configmap and restart the deployment",
    "raise the pool size from 20 to 50 and add a statement timeout",
    "scale the consumer group to match the partition count",
    "reissue the certificate with the intermediate chain included",
    "move the batch window to 02:00 UTC and throttle it",
    "enable WAL archiving cleanup and grow the volume by 20%",
    "restore the previous memory limit and profile the allocation spike",
    "switch the resolver to the node-local DNS cache",
    "fix the readiness probe path and lower its initial delay",
    "add a lock in the scheduler so only one replica runs the job",
]
DOC_TYPES = ["runbook", "incident", "service_pattern", "checklist", "fact", "note", "verification"]


def memory(rng: random.Random, n: int) -> dict:
    service = rng.choice(SERVICES)
    environment = rng.choice(ENVIRONMENTS)
    symptom = rng.choice(SYMPTOMS)
    fix = rng.choice(FIXES)
    doc_type = rng.choice(DOC_TYPES)
    incident = f"INC-{rng.randint(1000, 9999)}"
    return {
        "path": f"{doc_type}/{service}/{n:06d}",
        "title": f"{service} {environment}: {symptom}",
        "recall_hint": f"When {service} in {environment} shows that {symptom}.",
        "content": (
            f"In {environment}, {service} {symptom}. First check the dashboards and the last "
            f"deploy. What worked in {incident}: {fix}. Verify with the service's health "
            f"endpoint and error rate before closing. Owner team: {service}-oncall."
        ),
        "doc_type": doc_type,
        "tags": [service, environment],
        "entities": {"service": service, "environment": environment},
        "importance": rng.randint(1, 9),
    }
