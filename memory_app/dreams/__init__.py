"""Dream jobs: the offline work that keeps memory tidy (DESIGN §5, §7).

Each kind is a function `(job, progress) -> stats` registered in `KINDS`.
They only propose what changes shared meaning (promotions, merges,
supersessions) and only act alone where the rule is mechanical (expiry,
rotation of conversation drafts past the store's capacity, embeddings).
All are idempotent: a run that is retried or repeated finds its earlier
proposals still open and files no second copy.
"""
