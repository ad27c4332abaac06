"""Labelled memory pairs for tuning compaction's paraphrase threshold.

PARAPHRASES: two notes saying the same thing in different words, as two
runs write the same lesson; compaction should put them in one cluster.
NEAR_TOPIC: two notes about the same system or symptom that say different
things (another step, another cause, or — the last five — the same sentence
with a changed value); compaction must keep them apart. Written for this
project; no text comes from a public corpus.
"""

PARAPHRASES = [
    (
        "The checkout pods crash-loop after a config reload; rolling back the configmap fixes it.",
        "Reverting the checkout configmap stops the crash loop that starts when the config is "
        "reloaded.",
    ),
    (
        "Restart the node-local-dns daemonset when pods cannot resolve cluster service names.",
        "If in-cluster DNS lookups fail from pods, a rollout restart of node-local-dns brings "
        "resolution back.",
    ),
    (
        "Postgres 'too many connections' on payments: the pool size is per pod, so multiply by "
        "the replica count before raising it.",
        "Payments exhausted Postgres connections because every replica opens its own pool; "
        "check pool size times replicas against max_connections.",
    ),
    (
        "Use kubectl rollout undo to roll back a bad checkout release; it is the fastest "
        "mitigation.",
        "The quickest way to mitigate a broken checkout deploy is `kubectl rollout undo` to the "
        "previous ReplicaSet.",
    ),
    (
        "Registry pushes fail with 401 when the CI token has expired; tokens last 90 days.",
        "A 401 from the container registry in CI means the 90-day registry token ran out.",
    ),
    (
        "The ingress certificate renewal fails when the ACME HTTP-01 challenge path is blocked "
        "by the WAF rule.",
        "cert-manager cannot renew the ingress cert because the WAF blocks "
        "/.well-known/acme-challenge requests.",
    ),
    (
        "Kafka consumer lag on orders grows when the consumer group rebalances constantly; raise "
        "max.poll.interval.ms.",
        "Constant rebalancing of the orders consumer group causes the lag; increasing "
        "max.poll.interval.ms stops it.",
    ),
    (
        "Redis evicts session keys under memory pressure; set maxmemory-policy to volatile-lru, "
        "not allkeys-lru.",
        "Sessions disappeared because Redis used allkeys-lru; volatile-lru only evicts keys with "
        "a TTL.",
    ),
    (
        "Before a schema migration on the billing database, take a logical backup with pg_dump.",
        "Always pg_dump the billing DB before running a migration against it.",
    ),
    (
        "The user prefers answers with UTC timestamps.",
        "Write times in UTC for this user; they asked for UTC timestamps.",
    ),
    (
        "The search service returns 503 while the Elasticsearch cluster is yellow after a node "
        "restart; wait for shards to reallocate.",
        "After an Elasticsearch node restarts, search answers 503 until replica shards are "
        "reassigned and the cluster turns green.",
    ),
    (
        "Terraform plan shows drift on the S3 bucket policy because someone edited it in the "
        "console; re-apply from code.",
        "Drift in the bucket policy comes from manual console edits; fix it by applying the "
        "Terraform again.",
    ),
    (
        "The nightly backup job times out because the snapshot runs at the same time as the "
        "reindex; move it to 03:00.",
        "Schedule the nightly backup after the reindex finishes (03:00); running both together "
        "makes the backup time out.",
    ),
    (
        "Disk full on the log nodes: journald keeps too much; set SystemMaxUse=2G.",
        "Log hosts ran out of disk because journald was unbounded; cap it with SystemMaxUse=2G.",
    ),
    (
        "CI flakes in the integration tests come from tests sharing Redis database 15; give each "
        "worker its own database.",
        "The flaky integration tests share one Redis DB; isolating a database per test worker "
        "fixes the flakiness.",
    ),
    (
        "When the payments webhook returns 429, back off exponentially and retry; the provider "
        "rate-limits bursts.",
        "The payment provider throttles bursts with 429s, so retry its webhook with exponential "
        "backoff.",
    ),
    (
        "Pods stuck in Pending on the batch pool: the cluster autoscaler cannot add nodes "
        "because the node group hit its max size.",
        "Batch pods stay Pending because the node group is already at its maximum and the "
        "autoscaler cannot scale it up.",
    ),
    (
        "OOMKilled api pods: the JVM heap was larger than the container limit; set -Xmx to 75% "
        "of the limit.",
        "The api container was OOM-killed since the Java heap exceeded the memory limit; size "
        "-Xmx at three quarters of the limit.",
    ),
    (
        "The staging database password rotates monthly; read it from the vault path, never from "
        "the wiki.",
        "Get the staging DB credentials from vault; they rotate every month and the wiki copy is "
        "stale.",
    ),
    (
        "Feature flags are evaluated at request time; a flag change needs no deploy.",
        "You do not have to redeploy to change a feature flag: flags are read on every request.",
    ),
    (
        "Prefer small pull requests: the user wants one change per PR.",
        "This user likes pull requests that contain a single change each.",
    ),
    (
        "The grafana dashboard for checkout latency is 'Checkout / p99'; alerts link to it.",
        "Checkout p99 latency lives on the 'Checkout / p99' Grafana dashboard that the alerts "
        "point to.",
    ),
    (
        "To drain a node safely run kubectl drain with --ignore-daemonsets and "
        "--delete-emptydir-data.",
        "Draining a node needs `kubectl drain <node> --ignore-daemonsets --delete-emptydir-data`.",
    ),
    (
        "High p99 latency on the catalog API was caused by a missing index on products.sku.",
        "Catalog API tail latency came from sequential scans; products.sku had no index.",
    ),
    (
        "The SSO login loop happens when the session cookie domain lacks the leading dot.",
        "Users bounce between the app and SSO endlessly if the cookie domain is set without a "
        "leading dot.",
    ),
    (
        "Helm upgrade fails with 'another operation is in progress'; roll back the stuck "
        "release with helm rollback.",
        "If helm says another operation is in progress, the release is stuck pending; "
        "`helm rollback` clears it.",
    ),
    (
        "Cron jobs in the reports namespace run in UTC, not local time.",
        "The reports CronJobs use UTC schedules rather than the local timezone.",
    ),
    (
        "The mobile push service needs the APNs certificate renewed every year in March.",
        "Renew the APNs certificate for push notifications each March; it expires yearly.",
    ),
    (
        "Slow image pulls on new nodes: enable the registry mirror in containerd's config.",
        "New nodes pull images slowly until containerd is configured to use the registry mirror.",
    ),
    (
        "Run database migrations before deploying the new app version, never after.",
        "Apply the schema migrations first, then roll out the application release.",
    ),
]

NEAR_TOPIC = [
    (
        "The checkout pods crash-loop after a config reload; rolling back the configmap fixes it.",
        "The checkout pods crash-loop when the database is unreachable; check the DB endpoint "
        "secret.",
    ),
    (
        "Restart the node-local-dns daemonset when pods cannot resolve cluster service names.",
        "External DNS names fail to resolve from pods when the upstream resolver in the CoreDNS "
        "configmap is wrong.",
    ),
    (
        "Postgres 'too many connections' on payments: the pool size is per pod, so multiply by "
        "the replica count before raising it.",
        "Payments Postgres replication lag grows during the nightly batch; pause the batch if "
        "lag exceeds 30 seconds.",
    ),
    (
        "Use kubectl rollout undo to roll back a bad checkout release; it is the fastest "
        "mitigation.",
        "Use kubectl rollout status to follow a checkout release until every pod is ready.",
    ),
    (
        "Registry pushes fail with 401 when the CI token has expired; tokens last 90 days.",
        "Registry pushes fail with 413 when an image layer is larger than the proxy's body limit.",
    ),
    (
        "The ingress certificate renewal fails when the ACME HTTP-01 challenge path is blocked "
        "by the WAF rule.",
        "The ingress certificate is issued by the internal CA for staging and by Let's Encrypt "
        "for production.",
    ),
    (
        "Kafka consumer lag on orders grows when the consumer group rebalances constantly; raise "
        "max.poll.interval.ms.",
        "Kafka orders topic retention is 7 days; older events must be replayed from the archive.",
    ),
    (
        "Redis evicts session keys under memory pressure; set maxmemory-policy to volatile-lru, "
        "not allkeys-lru.",
        "Redis session keys expire after 30 minutes of inactivity, set by the app's TTL.",
    ),
    (
        "Before a schema migration on the billing database, take a logical backup with pg_dump.",
        "Billing database migrations must be reviewed by the data team before they run.",
    ),
    (
        "The user prefers answers with UTC timestamps.",
        "The user prefers answers in short bullet points.",
    ),
    (
        "The search service returns 503 while the Elasticsearch cluster is yellow after a node "
        "restart; wait for shards to reallocate.",
        "The search service returns 400 for queries longer than 1024 characters.",
    ),
    (
        "Terraform plan shows drift on the S3 bucket policy because someone edited it in the "
        "console; re-apply from code.",
        "Terraform state for the S3 buckets is stored in the infra-state bucket with locking in "
        "DynamoDB.",
    ),
    (
        "The nightly backup job times out because the snapshot runs at the same time as the "
        "reindex; move it to 03:00.",
        "Nightly backups are kept for 35 days and then moved to cold storage.",
    ),
    (
        "Disk full on the log nodes: journald keeps too much; set SystemMaxUse=2G.",
        "Disk full on the database nodes: WAL archiving stalled because the archive bucket "
        "credentials expired.",
    ),
    (
        "CI flakes in the integration tests come from tests sharing Redis database 15; give each "
        "worker its own database.",
        "CI integration tests take 14 minutes; most of it is building the Docker image.",
    ),
    (
        "When the payments webhook returns 429, back off exponentially and retry; the provider "
        "rate-limits bursts.",
        "When the payments webhook returns 400, the signature header is wrong; do not retry.",
    ),
    (
        "Pods stuck in Pending on the batch pool: the cluster autoscaler cannot add nodes "
        "because the node group hit its max size.",
        "Pods stuck in Pending on the batch pool because their PVC is bound to a volume in "
        "another availability zone.",
    ),
    (
        "OOMKilled api pods: the JVM heap was larger than the container limit; set -Xmx to 75% "
        "of the limit.",
        "The api pods restart because the liveness probe times out during long GC pauses.",
    ),
    (
        "The staging database password rotates monthly; read it from the vault path, never from "
        "the wiki.",
        "The production database password is only available to the on-call through break-glass "
        "access.",
    ),
    (
        "Feature flags are evaluated at request time; a flag change needs no deploy.",
        "Feature flags older than 90 days must be removed from the code.",
    ),
    (
        "Prefer small pull requests: the user wants one change per PR.",
        "The user wants pull requests to be squash-merged.",
    ),
    (
        "The grafana dashboard for checkout latency is 'Checkout / p99'; alerts link to it.",
        "Checkout latency alerts fire when p99 exceeds 800 ms for five minutes.",
    ),
    (
        "To drain a node safely run kubectl drain with --ignore-daemonsets and "
        "--delete-emptydir-data.",
        "To cordon a node without evicting pods run kubectl cordon; pods keep running.",
    ),
    (
        "High p99 latency on the catalog API was caused by a missing index on products.sku.",
        "High p99 latency on the catalog API was caused by the CDN cache being bypassed for "
        "images.",
    ),
    (
        "The SSO login loop happens when the session cookie domain lacks the leading dot.",
        "SSO logins fail with 'invalid audience' when the client id differs between environments.",
    ),
    (
        "Helm upgrade fails with 'another operation is in progress'; roll back the stuck "
        "release with helm rollback.",
        "Helm upgrade fails with 'field is immutable' when a Deployment's selector changed; "
        "delete and recreate it.",
    ),
    (
        "Cron jobs in the reports namespace run in UTC, not local time.",
        "Cron jobs in the reports namespace are suspended during the month-end freeze.",
    ),
    (
        "The mobile push service needs the APNs certificate renewed every year in March.",
        "The mobile push service sends Android notifications through FCM with a service "
        "account key.",
    ),
    (
        "Slow image pulls on new nodes: enable the registry mirror in containerd's config.",
        "Image pulls fail on new nodes when the pull secret is missing from the namespace.",
    ),
    (
        "Run database migrations before deploying the new app version, never after.",
        "Database migrations must be backwards compatible with the previous app version.",
    ),
    (
        "Restart the node-local-dns daemonset when pods cannot resolve cluster service names.",
        "Restart the metrics-server deployment when kubectl top reports no metrics.",
    ),
    (
        "Use kubectl rollout undo to roll back a bad checkout release; it is the fastest "
        "mitigation.",
        "Checkout releases go out at 10:00 and 15:00 on weekdays only.",
    ),
    (
        "The user prefers answers with UTC timestamps.",
        "The user works from Berlin and is online 08:00-17:00 CET.",
    ),
    (
        "Redis evicts session keys under memory pressure; set maxmemory-policy to volatile-lru, "
        "not allkeys-lru.",
        "Redis for sessions runs with 4 GB maxmemory on three replicas.",
    ),
    (
        "Kafka consumer lag on orders grows when the consumer group rebalances constantly; raise "
        "max.poll.interval.ms.",
        "Kafka consumer lag on payments grows when the downstream ledger API is slow.",
    ),
    (
        "The payments connection pool size is 20 in production.",
        "The payments connection pool size is 50 in production.",
    ),
    (
        "Nightly backups of the billing database run at 02:00 UTC.",
        "Nightly backups of the billing database run at 04:00 UTC.",
    ),
    (
        "The checkout service runs 12 replicas in production.",
        "The checkout service runs 8 replicas in production.",
    ),
    (
        "Registry tokens for CI expire after 90 days.",
        "Registry tokens for CI expire after 30 days.",
    ),
    (
        "Set the JVM heap of the api pods to 75% of the container memory limit.",
        "Set the JVM heap of the api pods to 50% of the container memory limit.",
    ),
]
