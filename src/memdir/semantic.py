"""Optional embedding models for journal search: a bundled static model or an HTTP endpoint.

Journal search is lexical (:func:`memdir.kernel.index.recall.search_turns`); with an embedding
model it also re-ranks its pool of candidates by ``score / best + w × cosine``
(:func:`~memdir.kernel.index.recall.fuse_turns`). Nothing here is downloaded at run time:

- :class:`StaticModel` reads the static token vectors that the ``wordllama`` wheel carries
  (``wordllama/weights/l2_supercat_256.safetensors``: 32,000 Llama-2 tokens × 256 dimensions,
  MIT licence) with its tokenizer file, through ``safetensors`` and ``tokenizers``
  (``pip install 'memdir[embed]'``). wordllama's own loader is not used: it looks for the
  tokenizer in a folder the wheel does not have and then tries Hugging Face.
- :class:`EndpointModel` asks an OpenAI-compatible ``/embeddings`` endpoint (standard library
  HTTP; a local server such as llama.cpp's or Ollama's, or a hosted one).

A text's vector (static model): the mean of its *content* tokens' vectors (stop words, question
words and the speakers' names dropped), each weighted by ``ln(1 + n / (1 + df))`` over the texts
of the one search (pool and neighbours), unit length. A turn's vector adds 0.3 × each of its
neighbours' (±2, same session). Chosen on LoCoMo's tuning conversations (0-3): the plain mean of
every token found 33 % mean recall, content words with idf 65 %, with the neighbours 73 %; BM25
alone 83 % (``docs/benchmarks.md``). The endpoint's vectors are used as it returns them.

Imports numpy, ``tokenizers`` and ``safetensors`` only when a model is loaded; never on the hook
path.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from importlib import util as importlib_util
from pathlib import Path
from typing import Any

from memdir.kernel.base.errors import UsageError
from memdir.kernel.lang.text import QUESTION_WORDS, STOP_WORDS

NEIGHBOUR_WEIGHT = 0.3
"""A turn's vector is its own plus this × each neighbour's (0.3 and 0.5 tried on tune)."""
CACHE_TEXTS = 100_000
"""Texts whose tokens a loaded model remembers (a long-running server's searches repeat them)."""
ENDPOINT_TIMEOUT_S = 10.0
ENDPOINT_BATCH = 256
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_SKIP = frozenset(STOP_WORDS) | frozenset(QUESTION_WORDS)


def content_words(text: str, names: frozenset[str] = frozenset()) -> str:
    """Return ``text``'s words without stop words, question words and ``names`` (lower case)."""
    return " ".join(
        w for w in _WORD.findall(text) if w.lower() not in _SKIP and w.lower() not in names
    )


class StaticModel:
    """Static token vectors and their tokenizer: idf-weighted mean of content tokens."""

    def __init__(self, vectors: Any, encode: Callable[[list[str]], list[list[int]]]) -> None:
        """Keep ``vectors`` (a numpy array, tokens × dimensions) and ``encode`` (texts → ids)."""
        self.vectors = vectors
        self.encode = encode
        self._cache: dict[tuple[str, frozenset[str]], list[int]] = {}

    @classmethod
    def bundled(cls) -> StaticModel:
        """Load the vectors the ``wordllama`` wheel ships (no network).

        Raises:
            UsageError: ``wordllama`` (or numpy, ``safetensors``, ``tokenizers``) is not
                installed, or its files are missing.
        """
        spec = importlib_util.find_spec("wordllama")
        if spec is None or not spec.submodule_search_locations:
            raise UsageError(
                "the bundled embedding model needs the wordllama package: "
                "pip install 'memdir[embed]'"
            )
        root = Path(next(iter(spec.submodule_search_locations)))
        weights = root / "weights" / "l2_supercat_256.safetensors"
        vocab = root / "tokenizers" / "l2_supercat_tokenizer_config.json"
        if not weights.is_file() or not vocab.is_file():
            raise UsageError(f"wordllama at {root} lacks its bundled weights or tokenizer")
        try:
            import numpy as np
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise UsageError(f"the bundled embedding model needs {exc.name}") from exc
        matrix = np.ascontiguousarray(load_file(str(weights))["embedding.weight"], np.float32)
        tokenizer = Tokenizer.from_file(str(vocab))
        tokenizer.no_padding()
        tokenizer.no_truncation()

        def encode(texts: list[str]) -> list[list[int]]:
            # The first id is the tokenizer's <s>: the same in every text, so left out.
            return [e.ids[1:] for e in tokenizer.encode_batch(texts)]

        return cls(matrix, encode)

    def similarity(
        self, query: str, texts: list[str], neighbours: list[list[str]], names: list[str]
    ) -> list[float]:
        """Return the cosine of each text (with its neighbours) to ``query``.

        Args:
            query: The search as typed.
            texts: The candidate turns' texts.
            neighbours: Per text, its neighbours' texts (any number).
            names: The speakers' names: left out of every vector (a name says who, not what).

        Returns:
            One cosine per text, −1..1 (0 for a text or query with no content word).
        """
        import numpy as np

        skip = frozenset(w.lower() for w in _WORD.findall(" ".join(names)))
        unique = list(dict.fromkeys([*texts, *(t for near in neighbours for t in near)]))
        ids = self._ids([query, *unique], skip)
        # Token weights: ln(1 + n / (1 + df)), df over this search's texts (not the query).
        size = self.vectors.shape[0]
        df = np.bincount(
            np.fromiter((i for row in ids[1:] for i in set(row)), np.int64), minlength=size
        )
        idf = np.log1p(len(unique) / (1.0 + df)).astype(np.float32)
        lengths = np.fromiter((len(row) for row in ids), np.int64, len(ids))
        flat = np.fromiter((i for row in ids for i in row), np.int64, int(lengths.sum()))
        rows = np.zeros((len(ids), self.vectors.shape[1]), np.float32)
        filled = lengths > 0
        if flat.size:
            starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))[filled]
            weighted = self.vectors[flat] * idf[flat][:, None]
            rows[filled] = np.add.reduceat(weighted, starts, axis=0)
        rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
        by_text = dict(zip(unique, rows[1:], strict=True))
        return _cosines(rows[0], texts, neighbours, by_text)

    def _ids(self, texts: list[str], skip: frozenset[str]) -> list[list[int]]:
        """Return the content tokens of each text, remembered for the next searches."""
        missing = [t for t in dict.fromkeys(texts) if (t, skip) not in self._cache]
        if missing:
            if len(self._cache) + len(missing) > CACHE_TEXTS:
                self._cache.clear()
            for text, row in zip(
                missing, self.encode([content_words(t, skip) for t in missing]), strict=True
            ):
                self._cache[(text, skip)] = row
        return [self._cache[(t, skip)] for t in texts]


class EndpointModel:
    """An OpenAI-compatible ``POST {base}/embeddings`` endpoint (``{"model", "input"}``)."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None) -> None:
        """Keep the endpoint's base URL (``…/v1``), model name and optional bearer key."""
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.api_key = api_key

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Return one vector per text, in order, batched by :data:`ENDPOINT_BATCH`.

        Raises:
            UsageError: the endpoint cannot be reached or answers something else than
                ``{"data": [{"embedding": […], "index": i}, …]}``.
        """
        out: list[list[float]] = []
        for start in range(0, len(texts), ENDPOINT_BATCH):
            batch = list(texts[start : start + ENDPOINT_BATCH])
            body = json.dumps({"model": self.model, "input": batch}).encode()
            headers = {"Content-Type": "application/json"}
            if self.api_key:
                headers["Authorization"] = f"Bearer {self.api_key}"
            request = urllib.request.Request(self.url, body, headers, method="POST")  # noqa: S310
            try:
                with urllib.request.urlopen(request, timeout=ENDPOINT_TIMEOUT_S) as answer:  # noqa: S310
                    doc = json.loads(answer.read())
                data = sorted(doc["data"], key=lambda item: int(item.get("index", 0)))
                vectors = [[float(x) for x in item["embedding"]] for item in data]
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise UsageError(f"embedding endpoint {self.url}: {exc}") from exc
            if len(vectors) != len(batch):
                raise UsageError(
                    f"embedding endpoint {self.url}: {len(vectors)} vectors for {len(batch)} texts"
                )
            out.extend(vectors)
        return out

    def similarity(
        self, query: str, texts: list[str], neighbours: list[list[str]], names: list[str]
    ) -> list[float]:
        """Return the cosine of each text (with its neighbours) to ``query`` (see StaticModel).

        ``names`` is unused: the endpoint's model sees the texts as they are.

        Raises:
            UsageError: as :meth:`embed`.
        """
        import numpy as np

        del names
        unique = list(dict.fromkeys([*texts, *(t for near in neighbours for t in near)]))
        rows = np.array(self.embed([query, *unique]), np.float32)
        rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
        by_text = dict(zip(unique, rows[1:], strict=True))
        return _cosines(rows[0], texts, neighbours, by_text)


def _cosines(
    query: Any, texts: list[str], neighbours: list[list[str]], by_text: dict[str, Any]
) -> list[float]:
    """Return per text the cosine to ``query`` of its vector + 0.3 × each neighbour's.

    ``by_text`` holds every text's unit vector; 0.3 is :data:`NEIGHBOUR_WEIGHT`.
    """
    import numpy as np

    at = {t: i for i, t in enumerate(by_text)}
    zero = len(at)  # a zero row pads the texts with fewer neighbours
    matrix = np.vstack([*by_text.values(), np.zeros_like(query)])
    width = 1 + max((len(near) for near in neighbours), default=0)
    members = np.full((len(texts), width), zero, np.int64)
    for row, (text, near) in enumerate(zip(texts, neighbours, strict=True)):
        members[row, : 1 + len(near)] = [at[text], *(at[t] for t in near)]
    coef = np.full(width, NEIGHBOUR_WEIGHT, np.float32)
    coef[0] = 1.0
    summed = np.einsum("j,ijk->ik", coef, matrix[members])
    norms = np.linalg.norm(summed, axis=1)
    dots = summed @ query
    return [float(d / n) if n > 1e-9 else 0.0 for d, n in zip(dots, norms, strict=True)]


def from_settings(name: str, url: str = "", model: str = "") -> StaticModel | EndpointModel:
    """Return the model ``[recall] embed`` names: ``wordllama`` or ``openai``.

    ``openai`` takes ``[recall] embed_url`` and ``embed_model``, and the bearer key from the
    environment variable ``MEMDIR_EMBED_API_KEY`` (never from a file in the store).

    Raises:
        UsageError: an unknown name, a missing URL or model, or the package missing.
    """
    if name == "wordllama":
        return StaticModel.bundled()
    if name == "openai":
        if not url or not model:
            raise UsageError("[recall] embed = 'openai' needs embed_url and embed_model")
        return EndpointModel(url, model, os.environ.get("MEMDIR_EMBED_API_KEY") or None)
    raise UsageError(f"[recall] embed: unknown model {name!r} (wordllama or openai)")
