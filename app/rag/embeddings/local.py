"""The `local` provider: all-MiniLM-L6-v2 on the CPU through onnxruntime, from the model files
committed beside this module (`minilm/`: an int8 ONNX graph with pooling inside, and its
tokenizer; `scripts/export_local_model.py` rebuilds them, ADR 0010). Nothing is downloaded,
ever, and neither torch nor transformers is needed to run it.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import queue
import threading
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from app.config import PROVIDER_DEFAULTS
from app.rag.embeddings.base import (
    EmbeddingError,
    SpanCounter,
    Vectors,
    only_row,
    unit_rows,
)

MODEL, DIM, FLOOR = PROVIDER_DEFAULTS["local"]
MODEL_DIR = Path(__file__).parent / "minilm"
# Word pieces the model reads, [CLS] and [SEP] included (tokenizer.json truncates there).
WINDOW = 256


@dataclass(frozen=True, slots=True)
class Model:
    """The ONNX session and its tokenizer. onnxruntime's `run` is safe to call from threads."""

    session: Any  # onnxruntime.InferenceSession: the package ships no type information
    tokenizer: Any  # tokenizers.Tokenizer, likewise

    def encode(self, texts: list[str]) -> Vectors:
        """The texts' vectors, each text run through the graph alone.

        The graph quantises its activations to int8 with one scale per input tensor
        (DynamicQuantizeLinear), so in a batch a text's vector followed its neighbours and
        their padding: cosine down to 0.988 on SciFact's chunks, and two ingests of one
        collection scored differently. Alone, a text's vector is a function of the text (ADR
        0028). It costs 3-15% more CPU than batches of 16 on SciFact's chunks, and pads
        nothing.
        """
        rows = []
        for encoding in self.tokenizer.encode_batch(texts):
            # The batch's padding is cut off again: the text is read at its own length.
            length = sum(encoding.attention_mask)
            ids = np.array([encoding.ids[:length]], dtype=np.int64)
            feed = {
                "input_ids": ids,
                "attention_mask": np.ones_like(ids),
                "token_type_ids": np.zeros_like(ids),
            }
            rows.append(self.session.run(["embedding"], feed)[0])
        vectors: Vectors = np.concatenate(rows) if rows else np.zeros((0, DIM), np.float32)
        return vectors


@cache
def counting_tokenizer() -> Any:
    """The model's tokenizer without its cut at WINDOW and its padding, for counting: loaded
    once per process (about 50 ms), apart from the model, so chunking never waits for it.

    Raises:
        EmbeddingError: the file is missing, or tokenizers is not installed.
    """
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise EmbeddingError(f"the local embedder needs {exc.name}; run `make setup`") from exc
    vocabulary = MODEL_DIR / "tokenizer.json"
    if not vocabulary.is_file():
        raise EmbeddingError(f"the local embedder's {vocabulary.name} is missing from {MODEL_DIR}")
    tokenizer = Tokenizer.from_file(str(vocabulary))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def count_tokens(texts: Sequence[str]) -> list[int]:
    """The word pieces the model makes of each text, [CLS] and [SEP] included, uncut.

    Raises:
        EmbeddingError: the tokenizer cannot be loaded.
    """
    if not texts:
        return []
    tokenizer = counting_tokenizer()
    if len(texts) == 1:  # a batch's worker threads cost more than one short text
        return [len(tokenizer.encode(texts[0]).ids)]
    # The fast batch skips the offsets, which counting does not need.
    return [len(encoding.ids) for encoding in tokenizer.encode_batch_fast(list(texts))]


class Spans:
    """A document's word pieces, counted once, and the pieces of any slice of it read off them.

    The tokenizer lowercases and strips accents character by character, then cuts words at
    whitespace and punctuation (each punctuation mark and each CJK ideograph a word of its own)
    and each word into pieces on its own. So a slice whose ends lie between words is, to the
    tokenizer, the document's words inside it: its count is the pieces that start inside it.
    An end inside a word (a long word cut in slices) gets None, and its text is counted.
    """

    __slots__ = ("_offsets", "_starts", "_words")

    def __init__(self, document: str) -> None:
        encoding = counting_tokenizer().encode(document, add_special_tokens=False)
        self._offsets: list[tuple[int, int]] = encoding.offsets
        self._starts: list[int] = [start for start, _ in self._offsets]
        self._words: list[int] = encoding.word_ids

    def __call__(self, start: int, end: int) -> int | None:
        """The word pieces of document[start:end] without [CLS] and [SEP], or None where an end
        lies inside a word."""
        first = bisect_left(self._starts, start)
        if self._inside(start, first):
            return None
        after = bisect_left(self._starts, end, first)
        if self._inside(end, after):
            return None
        return after - first

    def _inside(self, position: int, following: int) -> bool:
        # `following`: the first piece that starts at or after `position`. The position lies
        # inside a word when the piece before it runs past it, or when that piece and the next
        # are of one word (a piece that starts there is the word's continuation, or the gap
        # between them holds what the tokenizer drops, such as a control character).
        if following == 0:
            return False
        if self._offsets[following - 1][1] > position:
            return True
        return following < len(self._starts) and (
            self._words[following - 1] == self._words[following]
        )


def span_counts(document: str) -> Spans:
    """The counter of `document`'s slices (`Spans`), from one pass of the tokenizer over it.

    Raises:
        EmbeddingError: the tokenizer cannot be loaded.
    """
    return Spans(document)


def load_model() -> Model:
    """The model from the committed files, on the CPU.

    Raises:
        EmbeddingError: a file is missing, or onnxruntime or tokenizers is not installed.
    """
    try:
        import onnxruntime
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise EmbeddingError(f"the local embedder needs {exc.name}; run `make setup`") from exc
    graph, vocabulary = MODEL_DIR / "model.onnx", MODEL_DIR / "tokenizer.json"
    for path in (graph, vocabulary):
        if not path.is_file():
            raise EmbeddingError(f"the local embedder's {path.name} is missing from {MODEL_DIR}")
    options = onnxruntime.SessionOptions()
    # One thread per run: the embedder runs texts on as many threads as there are cores instead
    # (`LocalEmbedder._work`). A text runs alone (ADR 0028), and its small matrices split over
    # two threads left each waiting for the other; when an ingest's other work took a core, the
    # run waited for the thread that lost it. Alone the model ran 8% faster this way, with the
    # same vectors to the bit and the same time for a query (docs/BENCHMARKS.md, issue #33).
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    # Its threads wait for work by sleeping, not spinning: spinning doubled the CPU a pass
    # burns on two cores (2.8 s against 1.4-1.5 s for 40 SciFact abstracts) for no gain in
    # wall time on a shared machine, and took the cores an ingest's conversion, lexing and
    # writing overlap the model with (docs/BENCHMARKS.md, issue #33).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3  # warnings about unused initialisers are noise here
    session = onnxruntime.InferenceSession(
        str(graph), sess_options=options, providers=["CPUExecutionProvider"]
    )
    # The file cuts at MAX_TOKENS and pads to the longest text of a batch (the export sets it).
    return Model(session=session, tokenizer=Tokenizer.from_file(str(vocabulary)))


class _Call:
    """One call's texts, each embedded by whichever of the model's threads takes it; `done` is
    resolved on the caller's event loop when the last is in."""

    __slots__ = ("abandoned", "done", "left", "lock", "loop", "out", "texts")

    def __init__(self, texts: Sequence[str], loop: asyncio.AbstractEventLoop) -> None:
        self.texts = texts
        self.out: Vectors = np.zeros((len(texts), DIM), np.float32)
        self.left = len(texts)
        self.lock = threading.Lock()
        self.loop = loop
        self.done: asyncio.Future[None] = loop.create_future()
        # Set on the loop once the call is over before its texts are: its caller went (a
        # cancelled request) or a text failed it. Its texts still queued are then skipped. A
        # plain attribute: the threads read it between texts.
        self.abandoned = False
        self.done.add_done_callback(self._abandon)

    def _abandon(self, _done: asyncio.Future[None]) -> None:
        self.abandoned = True

    def encoded(self, index: int, vector: Vectors) -> None:
        """Called from a model thread: the text's vector is in; the last resolves `done`."""
        self.out[index] = vector
        with self.lock:
            self.left -= 1
            last = self.left == 0
        if last:
            self.loop.call_soon_threadsafe(_resolve, self.done, None)

    def failed(self, error: BaseException) -> None:
        """Called from a model thread: the call fails with the model's error."""
        self.loop.call_soon_threadsafe(_resolve, self.done, error)


def _resolve(done: asyncio.Future[None], error: BaseException | None) -> None:
    if done.done():  # cancelled, or an earlier text already failed the call
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)


# A query's texts go ahead of every passage queued. Passages go in turns of TURN texts: the
# first TURN of every call waiting before the next TURN of any, so a small upload or the
# dashboard's wordings wait for a turn of a large upload, not for all of it (as a lock per batch
# of 16 had it before ADR 0040). Within a turn, first come first served.
QUERY, PASSAGE, STOP = 0, 1, 2
TURN = 16


class LocalEmbedder:
    """MiniLM has no query or passage prefixes: both are embedded alike.

    The model loads once, in a thread: at start-up when the app warms it (`warm`), else on
    first use. Then a thread per core (up to eight) takes texts from one queue, each text run
    alone, so its vector does not depend on what else was queued (ADR 0028). A query's text
    goes ahead of any passage waiting, so a query waits behind an ingest for the texts already
    running, at most one per thread; calls of passages take turns of `TURN` texts. And the
    threads take a call's texts as they come free,
    across calls: when a call's last text runs on one thread, the other takes the next call's
    first, where a pass per call left a core idle for its last text (issue #33).
    """

    provider = "local"

    def __init__(self, *, threads: int | None = None) -> None:
        self.model = MODEL
        self.dim = DIM
        self.default_floor = FLOOR
        self.window: int | None = WINDOW
        self._threads = max(1, min(threads if threads is not None else os.cpu_count() or 1, 8))
        self._loading = asyncio.Lock()
        self._model: Model | None = None
        # (priority, turn, arrival, call, text's index): `arrival` is unique, so the call is
        # never compared.
        self._queue: queue.PriorityQueue[tuple[int, int, int, _Call | None, int]] = (
            queue.PriorityQueue()
        )
        self._arrivals = itertools.count()
        self._workers: list[threading.Thread] = []

    @property
    def ready(self) -> bool:
        """Whether the model is loaded: a search now pays no start-up cost."""
        return self._model is not None

    async def warm(self) -> None:
        """Load the model now rather than on the first search."""
        await self._started()

    async def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return await self._encode(texts, PASSAGE)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return count_tokens(texts)

    def span_counts(self, document: str) -> SpanCounter:
        return span_counts(document)

    async def embed_query(self, text: str) -> Vectors:
        return only_row(await self._encode([text], QUERY))

    async def _started(self) -> Model:
        async with self._loading:
            if self._model is None:
                self._model = await asyncio.to_thread(load_model)
            if not self._workers:
                model = self._model
                self._workers = [
                    threading.Thread(
                        target=self._work, args=(model,), name=f"minilm-{i}", daemon=True
                    )
                    for i in range(self._threads)
                ]
                for worker in self._workers:
                    worker.start()
            return self._model

    async def _encode(self, texts: Sequence[str], priority: int) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        await self._started()
        call = _Call(texts, asyncio.get_running_loop())
        for index in range(len(texts)):
            turn = index // TURN if priority == PASSAGE else 0
            self._queue.put((priority, turn, next(self._arrivals), call, index))
        await call.done
        return unit_rows(call.out, len(texts), self.dim, self.provider)

    def _work(self, model: Model) -> None:
        """A model thread: the next text queued, until told to stop."""
        while True:
            _priority, _turn, _arrival, call, index = self._queue.get()
            if call is None:
                return
            if call.abandoned:
                continue
            try:
                vector = model.encode([call.texts[index]])[0]
            except Exception as exc:  # the caller gets the model's error, the thread goes on
                call.failed(EmbeddingError(f"the local model failed: {exc}"))
                continue
            call.encoded(index, vector)

    async def aclose(self) -> None:
        """Stop the threads once the texts queued are done, and let the model go."""
        async with self._loading:
            workers, self._workers = self._workers, []
            for _ in workers:
                self._queue.put((STOP, 0, next(self._arrivals), None, 0))
            for worker in workers:
                await asyncio.to_thread(worker.join)
            self._model = None
