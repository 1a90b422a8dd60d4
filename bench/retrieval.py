"""Benchmark knowledge-base retrieval on PostgreSQL; print one JSON line.

Creates its own database (chatsite_bench_kb), gives one user the test corpus (a bilingual
company handbook, tests/knowledge/corpus/) plus synthetic documents up to BENCH_DOCUMENTS
(default 10,000; Korean and English, sharing the corpus vocabulary so queries match many
chunks), bulk-loaded with COPY, then measures recall@3 of the corpus's 40 questions (on
the corpus alone and among the 10,000) and retrieval latency p50/p95; drops the database.
`keyword_rls` times the same retrievals with row-level security on (the app role, the
user's scope) and off (the tables' owner), interleaved in one run (bench/rls_timing.py).
Then every chunk is embedded (the configured model: the bundled one unless EMBEDDING_MODEL
names a server's; minutes for 55,000 chunks) and the hybrid ranking the agent uses
(knowledge/hybrid.py: keyword + dense, fused, the question's embedding included) is measured
the same way: recall@3 among the 10,000, latency, and RLS on vs off (`hybrid_rls`).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/chatsite uv run python bench/retrieval.py
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.rls_timing import measure_rls
from bench.scratch_db import run_in_scratch_database

BENCH_DB = "chatsite_bench_kb"
DOCUMENTS = int(os.environ.get("BENCH_DOCUMENTS", 10_000))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", 5))
RLS_SAMPLES = int(os.environ.get("BENCH_RLS_SAMPLES", 400))  # each, on and off
SEED = 7
HANGUL_START, HANGUL_COUNT = 0xAC00, 11172


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(p95 * 1000, 2),
        "max_ms": round(ordered[-1] * 1000, 2),
    }


class Writer:
    """Synthetic handbook-like documents: corpus words mixed with invented ones."""

    def __init__(self, rng: random.Random, corpus_texts: list[str]) -> None:
        from text.words import is_hangul, words

        self.rng = rng
        vocab = {w for text in corpus_texts for w in words(text) if len(w) > 1}
        self.corpus = {
            True: sorted(w for w in vocab if is_hangul(w)),
            False: sorted(w for w in vocab if not is_hangul(w)),
        }
        self.invented = {True: [self._korean() for _ in range(8000)], False: []}
        self.invented[False] = [
            "".join(rng.choices("abcdefghiklmnoprstuvw", k=rng.randint(3, 9))) for _ in range(8000)
        ]

    def _korean(self) -> str:
        return "".join(
            chr(HANGUL_START + self.rng.randrange(HANGUL_COUNT))
            for _ in range(self.rng.randint(2, 4))
        )

    def word(self, korean: bool) -> str:
        pool = self.corpus[korean] if self.rng.random() < 0.25 else self.invented[korean]
        return self.rng.choice(pool)

    def sentence(self, korean: bool) -> str:
        return " ".join(self.word(korean) for _ in range(self.rng.randint(6, 16))) + "."

    def document(self, n: int) -> tuple[str, str]:
        """Return (file name, text) of synthetic document `n`."""
        korean = self.rng.random() < 0.5
        parts = []
        for s in range(1, self.rng.randint(3, 8) + 1):
            title = " ".join(self.word(korean) for _ in range(self.rng.randint(1, 3)))
            paragraphs = [
                " ".join(self.sentence(korean) for _ in range(self.rng.randint(2, 5)))
                for _ in range(self.rng.randint(1, 3))
            ]
            heading = f"제{s}조({title})" if korean else f"## {s}. {title}"
            parts.append(heading + ("\n" if korean else "\n\n") + "\n\n".join(paragraphs))
        return (f"doc-{n}.txt" if korean else f"doc-{n}.md"), "\n\n".join(parts)


def load(url: str, user_id: int, files: list[tuple[str, str]]) -> tuple[int, float]:
    """COPY documents and their chunks for one user; return the chunk count and seconds."""
    from knowledge.models import Document
    from knowledge.services import build_chunks

    started = time.perf_counter()
    now = datetime.now(UTC)
    chunks = 0
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        # Indexes are built once after the load, not row by row.
        cur.execute("DROP INDEX chunk_search_vector")
        cur.execute("DROP INDEX chunk_text_trgm")
        with cur.copy(
            "COPY knowledge_document (id, owner_id, title, filename, kind, size_bytes, text,"
            " section_count, chunk_count, created_at) FROM STDIN"
        ) as copy_documents:
            rows = []
            for name, text in files:
                document = Document(
                    id=uuid.uuid4(),
                    owner_id=user_id,
                    title=Path(name).stem,
                    filename=name,
                    kind=Path(name).suffix[1:],
                    size_bytes=len(text.encode()),
                    text=text,
                )
                built = build_chunks(document)
                copy_documents.write_row(
                    (
                        document.id,
                        user_id,
                        document.title,
                        name,
                        document.kind,
                        document.size_bytes,
                        text,
                        document.section_count,
                        document.chunk_count,
                        now,
                    )
                )
                rows.extend(built)
        with cur.copy(
            "COPY knowledge_documentchunk (document_id, owner_id, ordinal, section_index,"
            ' section_number, section_title, heading, text, terms, start, "end", embedding_model)'
            " FROM STDIN"
        ) as copy_chunks:
            for c in rows:
                copy_chunks.write_row(
                    (
                        c.document.id,
                        user_id,
                        c.ordinal,
                        c.section_index,
                        c.section_number,
                        c.section_title,
                        c.heading,
                        c.text,
                        c.terms,
                        c.start,
                        c.end,
                        "",  # no vector yet
                    )
                )
                chunks += 1
        conn.commit()  # Django's foreign keys are deferred: check them before indexing
        cur.execute(
            "CREATE INDEX chunk_search_vector ON knowledge_documentchunk USING gin (search_vector)"
        )
        cur.execute(
            "CREATE INDEX chunk_text_trgm ON knowledge_documentchunk USING gin (text gin_trgm_ops)"
        )
        conn.commit()
        conn.autocommit = True
        cur.execute("VACUUM ANALYZE knowledge_documentchunk")
        cur.execute("VACUUM ANALYZE knowledge_document")
    return chunks, time.perf_counter() - started


def run(url: str) -> dict[str, object]:
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatsite.settings")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from core import rls
    from knowledge import embeddings, hybrid, vectors
    from knowledge.retrieval import retrieve
    from tests.knowledge.recall import corpus_files, load_questions, recall_at, upload_corpus

    call_command("migrate", verbosity=0)
    users = get_user_model().objects
    solo = users.create_user(username="solo", password="x")
    bench = users.create_user(username="bench", password="x")
    # Each user's uploads and retrievals run in that user's RLS scope, as in the app.
    with rls.as_user(solo.id):
        recall_corpus, _ = recall_at(
            lambda q, k: retrieve(user_id=solo.id, query=q, k=k), upload_corpus(solo), k=3
        )

    corpus = corpus_files()
    rng = random.Random(SEED)
    writer = Writer(rng, [data.decode() for _, data in corpus])
    synthetic = [writer.document(n) for n in range(DOCUMENTS - len(corpus))]
    with rls.as_user(bench.id):
        corpus_ids = upload_corpus(bench)
        chunks, load_seconds = load(url, bench.id, synthetic)  # COPY as the tables' owner

        questions = [item["q"] for item in load_questions()]
        for q in questions:  # warm the cache and the plans
            retrieve(user_id=bench.id, query=q, k=3)
        samples = []
        for _ in range(ROUNDS):
            for q in questions:
                started = time.perf_counter()
                retrieve(user_id=bench.id, query=q, k=3)
                samples.append(time.perf_counter() - started)
        recall_scale, misses = recall_at(
            lambda q, k: retrieve(user_id=bench.id, query=q, k=k), corpus_ids, k=3
        )
        keyword = measure_rls(
            lambda q: retrieve(user_id=bench.id, query=q, k=3),
            [(bench.id, q) for q in questions],
            random.Random(SEED),
            RLS_SAMPLES,
        )
        started = time.perf_counter()
        embedded = vectors.embed_pending(owner_id=bench.id)
        embed_seconds = time.perf_counter() - started

        def fused(q: str, k: int = 3) -> object:
            return hybrid.retrieve(user_id=bench.id, query=q, k=k)

        for q in questions:
            fused(q)
        hybrid_samples = []
        for _ in range(ROUNDS):
            for q in questions:
                started = time.perf_counter()
                fused(q)
                hybrid_samples.append(time.perf_counter() - started)
        hybrid_recall, hybrid_misses = recall_at(fused, corpus_ids, k=3)
        hybrid_rls = measure_rls(
            fused, [(bench.id, q) for q in questions], random.Random(SEED), RLS_SAMPLES
        )
    latency = percentiles(samples)
    hybrid_latency = percentiles(hybrid_samples)
    return {
        "benchmark": "knowledge_retrieval",
        "documents": DOCUMENTS,
        "chunks": chunks,
        "questions": len(questions),
        "recall_at_3": round(recall_corpus, 3),
        "recall_at_3_among_10k": round(recall_scale, 3),
        "queries_timed": len(samples),
        **latency,
        "load_seconds": round(load_seconds, 1),
        "misses_among_10k": [m["q"] for m in misses],
        "keyword_rls": keyword,
        "embedding_model": embeddings.model_id(),
        "chunks_embedded": embedded,
        "embed_seconds": round(embed_seconds, 1),
        "hybrid_recall_at_3_among_10k": round(hybrid_recall, 3),
        "hybrid": hybrid_latency,
        "hybrid_misses_among_10k": [m["q"] for m in hybrid_misses],
        "hybrid_rls": hybrid_rls,
        "targets_met": {
            "recall_at_3_ge_0.9": recall_corpus >= 0.9,
            "p95_lt_100ms": latency["p95_ms"] < 100,
            "keyword_p95_le_40ms_rls_on": keyword["rls_on"]["p95_ms"] <= 40,
            "keyword_rls_p95_ratio_le_1.2": keyword["rls_p95_ratio"] <= 1.2,
            "hybrid_recall_at_3_among_10k_ge_0.85": hybrid_recall >= 0.85,
            "hybrid_p95_le_100ms_rls_on": hybrid_rls["rls_on"]["p95_ms"] <= 100,
            "hybrid_rls_p95_ratio_le_1.2": hybrid_rls["rls_p95_ratio"] <= 1.2,
        },
    }


def main() -> None:
    run_in_scratch_database(BENCH_DB, run)


if __name__ == "__main__":
    main()
