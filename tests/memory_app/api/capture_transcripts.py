"""Runs written the way agents and their users actually talk, for capture tests."""

TOKEN = "ghp_" + "Zq7Lm2Np4Rs6Tu8Vw0Xy1Ab3Cd5Ef7Gh9Ij2Kl"

INCIDENT_WITH_LEARNINGS = [
    {
        "role": "user",
        "content": "Checkout is throwing 502s since the 14:00 release, can you take a look? "
        "It's paging the on-call.",
    },
    {
        "role": "assistant",
        "content": "Looking at the pods first.\n$ kubectl -n payments get pods -l app=checkout",
    },
    {
        "role": "tool",
        "content": "NAME                        READY   STATUS             RESTARTS\n"
        "checkout-7d9f8c6b5-2kq9x    0/1     CrashLoopBackOff   6\n"
        "checkout-7d9f8c6b5-8zt4m    0/1     CrashLoopBackOff   6",
    },
    {
        "role": "assistant",
        "content": "They crash on start. Previous logs:\n"
        "$ kubectl -n payments logs deploy/checkout --previous",
    },
    {
        "role": "tool",
        "content": 'FATAL: remaining connection slots are reserved for role "replication"\n'
        "pool: opening 200 connections",
    },
    {
        "role": "assistant",
        "content": "The new release opens 200 connections per pod. Rolling back.\n"
        "```bash\nkubectl -n payments rollout undo deployment/checkout\n```",
    },
    {"role": "tool", "content": "deployment.apps/checkout rolled back"},
    {
        "role": "assistant",
        "content": "All 12 pods are healthy again and the 5xx rate is back to normal.",
    },
    {
        "role": "user",
        "content": "Great, thanks! Next time please always post the rollback command in "
        "#payments-oncall before you run it. Also, I prefer UTC timestamps in incident notes.",
    },
    {
        "role": "assistant",
        "content": "## Incident report: checkout 502s\n\n"
        "**Root cause:** release 2024.11.3 raised the DB pool from 20 to 200 connections per "
        "pod; 12 pods exhausted Postgres max_connections (500).\n"
        "**Fix:** rolled back deployment/checkout to the previous ReplicaSet.\n"
        "**Verified by:** checkout 5xx rate under 0.1% for 15 minutes and 12/12 pods Ready.\n\n"
        "### Learnings\n"
        "- Pool size is per pod: multiply it by the replica count before raising it; "
        "12 x 200 exceeded max_connections=500.\n"
        "- `kubectl rollout undo` is the fastest mitigation for a bad checkout release; the "
        "previous ReplicaSet is kept for 10 revisions.\n"
        "- n/a\n\n"
        "### Next steps\n"
        "- Add a connection budget check to the release checklist.",
    },
]

INCIDENT_WITHOUT_LEARNINGS = """\
User: staging can't resolve payments.svc.cluster.local since this morning, builds are failing
Assistant: Checking DNS from a pod.
$ kubectl -n staging exec deploy/api -- nslookup payments.svc.cluster.local
Tool: ;; connection timed out; no servers could be reached
Assistant: CoreDNS itself answers; the node-local cache does not. Restarting it.
$ kubectl -n kube-system rollout restart daemonset/node-local-dns
Tool: daemonset.apps/node-local-dns restarted
Assistant: Lookups succeed again from all pods and the alert cleared at 10:42 UTC.
The root cause was the node-local-dns cache holding a stale upstream IP after the kube-dns \
service was recreated. I fixed it by restarting the node-local-dns daemonset. I verified it \
with nslookup from three pods on different nodes.
"""

SECRET_LEAK = [
    {"role": "user", "content": "The image pushes to the registry fail with 401, please fix."},
    {
        "role": "assistant",
        "content": "Rotated the CI registry credential; pushes work again.\n\n"
        "Lessons learned:\n"
        f"- The registry token for CI is {TOKEN}; it lives in the ci-secrets vault path.\n"
        "- Registry tokens expire after 90 days; CI pushes fail with 401 when they do, so "
        "check the token's expiry date first.",
    },
]

CHATTY = [
    {"role": "user", "content": "Morning! How was your weekend?"},
    {
        "role": "assistant",
        "content": "I don't have weekends, but I hope yours was good. What are we working on?",
    },
    {
        "role": "user",
        "content": "Nothing much yet, my kid had swimming lessons so I'm late. Maybe the "
        "cache is slow today? Not sure, I'll look after lunch.",
    },
    {
        "role": "assistant",
        "content": "Sounds good. Let's always use a fresh coffee before debugging caches. "
        "Ping me when you're back.",
    },
]

# The fix is confirmed only after a check, the user's preference carries a
# question tag, and the agent's word on the fix comes two messages later.
RESTART_CHECKED = [
    {
        "role": "user",
        "content": "Orders are failing on checkout since the configmap change at 09:10. "
        "I prefer short answers, can you just tell me what you ran?",
    },
    {
        "role": "assistant",
        "content": "The pods still run the old config. Restarting them.\n"
        "$ kubectl rollout restart deploy/checkout",
    },
    {"role": "tool", "content": "deployment.apps/checkout restarted"},
    {"role": "assistant", "content": "$ kubectl get pods -l app=checkout"},
    {
        "role": "tool",
        "content": "NAME                        READY   STATUS    RESTARTS   AGE\n"
        "checkout-5c8d7f9b4-4hx2p    1/1     Running   0          41s\n"
        "checkout-5c8d7f9b4-n7wq8    1/1     Running   0          38s",
    },
    {"role": "assistant", "content": "It works now."},
    {
        "role": "assistant",
        "content": "Root cause: checkout reads its configmap only at start, so the 09:10 change "
        "never reached the running pods.\n\n"
        "### Learnings\n"
        "- After changing the checkout configmap, restart the deployment; running pods keep "
        "the old values.\n"
        "- A rollout restart of checkout keeps two pods ready throughout, so it is safe in "
        "business hours.",
    },
]

# What a run tried before the fix worked: a command that failed, one whose
# outcome it never stated, an early guess at the cause it later corrected,
# and a question the user asked rather than a preference.
TRIED_BEFORE_THE_FIX = [
    {
        "role": "user",
        "content": "Search is timing out for every customer. Should we always use the "
        "replica for search?",
    },
    {
        "role": "assistant",
        "content": "The root cause is probably the cache. Flushing it.\n"
        "$ redis-cli -h search-cache FLUSHALL",
    },
    {"role": "tool", "content": "OK"},
    {"role": "assistant", "content": "$ kubectl -n search scale deploy/search-api --replicas=6"},
    {"role": "tool", "content": "Error from server (Forbidden): deployments.apps is forbidden"},
    {"role": "assistant", "content": "$ kubectl -n search rollout undo deploy/search-api"},
    {"role": "tool", "content": "deployment.apps/search-api rolled back"},
    {"role": "assistant", "content": "Search answers in 80 ms again and the alert cleared."},
    {
        "role": "assistant",
        "content": "Root cause: release 3.2 dropped the index hint on the customer query.",
    },
]
