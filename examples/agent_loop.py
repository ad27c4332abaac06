"""An agent loop using the client library: memory context before each turn,
what it learned remembered, the memories it relied on marked, and a lesson
worth sharing proposed for the team's runbooks.

    pip install ./client
    python examples/agent_loop.py http://127.0.0.1:8000 ama_yourkey

The model is a stand-in (`answer`): put your LLM call there, with
`context["context"]` in its prompt as hypotheses to verify.
"""

import sys
import uuid

from agent_memory_client import MemoryClient, WriteBlocked

TURNS = [
    "The ingress pods crash-loop after the config reload again. What did we do last time?",
    "Rolling back the configmap fixed it. Remember that for next time.",
]


def answer(message: str, context: str) -> tuple[str, str | None]:
    """The model's reply, and a learning worth keeping (or None)."""
    if "fixed it" in message:
        return "Noted.", "Ingress crash loop after a config reload: roll back the configmap."
    return f"From memory:\n{context or '(nothing yet)'}", None


def run(base_url: str, api_key: str) -> None:
    with MemoryClient(base_url, api_key) as memory:
        conversation = memory.conversation(f"example-{uuid.uuid4().hex[:8]}")
        learned_id = None
        for number, message in enumerate(TURNS, start=1):
            turn = conversation.next_run(f"turn-{number}")
            context = turn.context(message)
            reply, learning = answer(message, context["context"])
            print(f"user> {message}\nagent> {reply}\n")
            if context["documents"]:
                turn.mark_used([document["id"] for document in context["documents"]])
            if learning:
                try:
                    saved = turn.remember(
                        title="Ingress crash loop after config reload",
                        content=learning,
                        doc_type="incident",
                        tags=["ingress"],
                    )
                except WriteBlocked as refused:
                    print(f"not remembered: {[f['detector'] for f in refused.findings]}")
                    continue
                learned_id = saved["id"]
        if learned_id:
            proposal = conversation.next_run("wrap-up").propose_promotion(
                learned_id,
                target_store="workspace_runbooks",
                rationale="Confirmed fix for a recurring incident.",
            )
            print(f"proposed for review: {proposal['review_item_id']}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    run(sys.argv[1], sys.argv[2])
