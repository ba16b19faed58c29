"""Identifiers as the keyword half reads them: parts for the parser, written forms as names,
prose left alone; and the lexemes PostgreSQL then makes of them."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.engine import ReadConnection
from app.rag import queries
from app.rag.identifiers import Lexable, lexable, tsvector_literal


def _words(text: str) -> list[str]:
    return lexable(text).words.split()


def test_a_route_is_its_segment() -> None:
    assert _words("GET /readyz.") == ["GET", "readyz"]
    assert lexable("/readyz").wholes == ()


def test_a_path_gives_its_segments_and_every_run_of_them() -> None:
    lexed = lexable("docs/multi-corpus.md")
    assert _words("docs/multi-corpus.md") == ["docs", "multi-corpus", "md"]
    assert lexed.wholes == ("docs/multi-corpus.md", "multi-corpus.md")
    assert set(lexable("app/rag/queries.py").wholes) == {
        "app/rag",
        "rag/queries.py",
        "app/rag/queries.py",
        "queries.py",
    }


def test_snake_and_screaming_case_give_their_words_and_their_names() -> None:
    assert lexable("KEY_ID") == Lexable(words=" KEY ID ", joined="", wholes=("key_id",))
    lexed = lexable("set CORPUS_OPEN_SIGNUP=1")
    assert lexed.words.split() == ["set", "CORPUS", "OPEN", "SIGNUP", "=1"]
    assert set(lexed.wholes) == {"corpus_open", "open_signup", "corpus_open_signup"}


def test_a_dotted_name_gives_its_components_and_every_run_of_them() -> None:
    lexed = lexable("see app.rag.queries.")
    assert lexed.words.split() == ["see", "app", "rag", "queries"]
    assert set(lexed.wholes) == {"app.rag", "rag.queries", "app.rag.queries"}


def test_camel_case_gives_its_words_and_keeps_the_word_as_written() -> None:
    lexed = lexable("embeddedPostgres and HTTPServer")
    assert lexed.words.split() == ["embedded", "Postgres", "and", "HTTP", "Server"]
    assert lexed.joined == "embeddedPostgres HTTPServer"
    assert lexed.wholes == ()


def test_words_of_prose_pass_as_written_beside_identifiers() -> None:
    # Lower case and capitalised words (in any script) are never identifiers, and are passed
    # over first; every other word is still read.
    text = "Herons nest; naïve Éric met eGFR, HTTPServer and ABC in Zürich"
    lexed = lexable(text)
    assert lexed.words.split() == [
        "Herons", "nest;", "naïve", "Éric", "met", "eGFR,",
        "HTTP", "Server", "and", "ABC", "in", "Zürich",
    ]  # fmt: skip
    assert lexed.joined == "HTTPServer"


def test_a_flag_is_its_name_and_its_words() -> None:
    assert lexable("--workspace") == Lexable(
        words=" workspace ", joined="", wholes=("--workspace",)
    )
    assert lexable("--dry-run").wholes == ("--dry-run",)
    assert lexable("run it (-v)").wholes == ("-v",)
    assert lexable("pass '--workspace'").wholes == ("--workspace",)


def test_a_version_is_its_number_and_its_name() -> None:
    assert lexable("v2.3.0") == Lexable(words=" 2.3.0 ", joined="", wholes=("v2.3.0",))


def test_a_url_loses_its_scheme() -> None:
    assert _words("http://localhost:8000/readyz") == ["localhost", "8000", "readyz"]


@pytest.mark.parametrize(
    "prose",
    [
        "e.g. the IL-6 and TNF-alpha levels rose 3.5-fold (Fig.2, p < 0.05)",
        "mRNA and pH and iPhone, miRNAs and RNAs, HeLa cells, GTPase, MeCP2",
        "Ca2+-dependent signalling",
        "recall/precision and/or 5 mg/kg of C57BL/6 mice",
        "5'-nucleotidase and H.pylori-mediated and E.coli",
        "a multi-corpus search at 10:30, version 2.3.0, error E501",
        "Results: the well-known effect.",
    ],
)
def test_prose_is_left_to_the_parser(prose: str) -> None:
    assert lexable(prose) == Lexable(words=prose, joined="", wholes=())


def test_a_name_said_twice_counts_twice_in_the_literal() -> None:
    assert tsvector_literal(("key_id", "a'b", "key_id")) == "'key_id':1,3 'a''b':2"
    assert tsvector_literal(()) == ""


async def _lexemes(conn: AsyncConnection, query: str) -> set[str]:
    return set(await queries.query_lexemes(ReadConnection(conn), query))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("/readyz", {"readyz"}),
        (
            "docs/multi-corpus.md",
            {"doc", "multi-corpus", "multi", "corpus", "md", "multi-corpus.md"},
        ),
        ("KEY_ID", {"key", "id", "key_id"}),
        ("app.rag.queries", {"app", "rag", "queri", "app.rag", "rag.queries"}),
        ("embeddedPostgres", {"embed", "postgr", "embeddedpostgr"}),
        ("--workspace", {"workspac", "--workspace"}),
        ("v2.3.0", {"2.3.0", "v2.3.0"}),
        ("E501", {"e501"}),
    ],
)
async def test_postgresql_makes_words_and_names_of_an_identifier(
    conn: AsyncConnection, query: str, expected: set[str]
) -> None:
    assert expected <= await _lexemes(conn, query)


async def test_the_literal_is_a_tsvector_postgresql_reads(conn: AsyncConnection) -> None:
    literal = tsvector_literal(("it's", "a\\b", "key_id", "key_id"))
    row = (
        await conn.execute(
            text("SELECT lexeme, positions FROM unnest(CAST(:v AS tsvector)) ORDER BY lexeme"),
            {"v": literal},
        )
    ).all()
    assert [(r.lexeme, list(r.positions)) for r in row] == [
        ("a\\b", [2]),
        ("it's", [1]),
        ("key_id", [3, 4]),
    ]
