"""Converting uploads to Markdown: detection, each format's converter, and the failures an
uploader can cause. Every file is built here, from bytes or with the format's own library."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import docx
import pytest
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls
from pypdf import PdfReader, PdfWriter

from app.documents.convert import (
    DOCX,
    HTML,
    MARKDOWN,
    PDF,
    PLAIN_TEXT,
    SUPPORTED_MEDIA_TYPES,
    SUPPORTED_SUFFIXES,
    Limits,
    clean_title,
    to_markdown,
)
from app.errors import TooLarge, UnsupportedMediaType, ValidationFailed
from app.kit.types import MAX_TITLE_CHARS
from app.rag.chunking import chunk_markdown
from tests.documents.pdfs import pdf as _pdf
from tests.documents.pdfs import text as _text

_RUNBOOK_PDF = _pdf(_text("First page text.", "Second line."), _text("Page two."), title="Runbook")


def _encrypted(pdf: bytes, *, user_password: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.encrypt(user_password=user_password, owner_password="owner-secret")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _docx(*, title: str | None = None) -> bytes:
    document = docx.Document()
    if title is not None:
        document.core_properties.title = title
    document.add_paragraph("Operations Manual", style="Title")
    document.add_heading("Deploy", level=1)
    document.add_paragraph("Ship it   carefully.")
    document.add_paragraph("build the image", style="List Bullet")
    document.add_paragraph("push the image", style="List Number")
    document.add_paragraph("tag it", style="List Bullet 2")
    numbered = document.add_paragraph("a numbered paragraph without a list style")
    numbered._p.get_or_add_pPr().append(
        parse_xml(f'<w:numPr {nsdecls("w")}><w:ilvl w:val="2"/><w:numId w:val="1"/></w:numPr>')
    )
    document.add_heading("Rollback", level=2)
    document.add_heading("Deep", level=9)
    table = document.add_table(rows=3, cols=2)
    for row, values in zip(
        table.rows, [("Step", "Command"), ("undo", "make a|b"), ("", "")], strict=True
    ):
        for cell, value in zip(row.cells, values, strict=True):
            cell.text = value
    document.add_paragraph("")
    document.add_paragraph("The end.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


_HTML = """<!DOCTYPE html>
<html><head><title> Deploy   guide </title><style>p { color: red }</style></head>
<body>
<nav><a href="/">Home</a> <a href="/docs">Docs</a></nav>
<h1>Deploying</h1>
<p>Run <code>make_release</code> with <strong>care</strong>.</p>
<p>See <img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==" alt="the diagram">.</p>
<script>console.log("tracking")</script>
<h2>Steps</h2>
<ul><li>build</li><li>push</li></ul>
<pre><code class="language-python">print("```")
</code></pre>
<table><tr><th>flag</th><th>meaning</th></tr><tr><td>-x</td><td>a|b</td></tr></table>
</body></html>"""


def test_markdown_is_kept_and_its_first_level_one_heading_is_the_title() -> None:
    source = "Intro line.\n\n## Not this\n\n# Release notes #\n\nText.\n\n# Later"

    converted = to_markdown(source.encode(), filename="notes.md", content_type=None)

    assert converted.markdown == source
    assert converted.media_type == MARKDOWN
    assert converted.title == "Release notes"


def test_a_heading_inside_a_code_fence_is_not_the_title() -> None:
    source = "```sh\n# install\n```\n\n~~~~\n# still code\n~~~\n~~~~\n\n# Real title"

    converted = to_markdown(source.encode(), filename="notes.md", content_type=None)

    assert converted.title == "Real title"


def test_markdown_without_a_level_one_heading_has_no_title() -> None:
    converted = to_markdown(b"## Section\n\ntext", filename="a.markdown", content_type=None)

    assert converted.title is None


def test_plain_text_is_kept_as_is_with_no_title() -> None:
    source = "# not a title in plain text\n\n  indented *stays* as_is"

    converted = to_markdown(source.encode(), filename="notes.txt", content_type=None)

    assert converted == type(converted)(markdown=source, media_type=PLAIN_TEXT, title=None)


def test_a_utf8_byte_order_mark_is_dropped() -> None:
    converted = to_markdown("\ufeff# Título\n".encode(), filename="a.md", content_type=None)

    assert converted.markdown == "# Título"
    assert converted.title == "Título"


def test_the_result_is_normalised() -> None:
    source = b"  \r\nline one   \r\nline two\t\r\n\r\n\r\n\r\n\r\n\r\nafter five blank lines\r\n\n"

    converted = to_markdown(source, filename="a.txt", content_type=None)

    assert converted.markdown == "line one\nline two\n\n\nafter five blank lines"


@pytest.mark.parametrize(
    "data",
    [b"caf\xe9 au lait", b"\xff\xfe\x00\x00", b"ok\x00then binary"],
    ids=["latin-1", "utf-32-bom", "nul-byte"],
)
def test_text_that_is_not_utf8_is_rejected(data: bytes) -> None:
    with pytest.raises(ValidationFailed) as failure:
        to_markdown(data, filename="notes.txt", content_type=None)

    assert failure.value.code == "validation_error"


@pytest.mark.parametrize(
    ("data", "filename"),
    [
        (b"", "empty.md"),
        (b" \n\t\r\n", "blank.txt"),
        (b"<html><script>x()</script><nav>menu</nav></html>", "page.html"),
    ],
)
def test_an_empty_document_is_rejected(data: bytes, filename: str) -> None:
    with pytest.raises(ValidationFailed) as failure:
        to_markdown(data, filename=filename, content_type=None)

    assert failure.value.code == "validation_error"


@pytest.mark.parametrize(
    ("filename", "content_type", "data", "expected"),
    [
        ("NOTES.MD", None, b"x", MARKDOWN),
        ("notes.markdown", None, b"x", MARKDOWN),
        ("notes.text", None, b"x", PLAIN_TEXT),
        ("page.HTM", None, b"<p>x</p>", HTML),
        ("report.pdf", None, _RUNBOOK_PDF, PDF),
        ("C:\\fakepath\\manual.docx", None, _docx(), DOCX),
        ("notes.md", "text/plain", b"x", MARKDOWN),
        (None, "text/markdown; charset=utf-8", b"x", MARKDOWN),
        ("upload", "TEXT/HTML; charset=UTF-8", b"<p>x</p>", HTML),
        (None, "application/xhtml+xml", b"<p>x</p>", HTML),
        ("blob", "application/octet-stream", _RUNBOOK_PDF, PDF),
        (None, None, _docx(), DOCX),
        (None, None, b"\xef\xbb\xbf  <!DOCTYPE HTML><p>x</p>", HTML),
        (None, None, b"\n<html><body>x</body></html>", HTML),
        ("script.py", None, b"print('hello')", PLAIN_TEXT),
        (None, "application/octet-stream", "naïve text".encode(), PLAIN_TEXT),
    ],
)
def test_the_media_type_comes_from_the_name_then_the_declared_type_then_the_bytes(
    filename: str | None, content_type: str | None, data: bytes, expected: str
) -> None:
    converted = to_markdown(data, filename=filename, content_type=content_type)

    assert converted.media_type == expected
    assert expected in SUPPORTED_MEDIA_TYPES


def test_the_supported_suffixes_are_the_ones_detection_knows() -> None:
    expected = {".md", ".markdown", ".txt", ".text", ".html", ".htm", ".pdf", ".docx"}
    assert expected == SUPPORTED_SUFFIXES
    assert {
        to_markdown(b"<p>x</p>", filename=f"a{suffix.upper()}", content_type=None).media_type
        for suffix in SUPPORTED_SUFFIXES - {".pdf", ".docx"}
    } == SUPPORTED_MEDIA_TYPES - {PDF, DOCX}


def _zip(name: str) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(name, "<xml/>")
    return out.getvalue()


@pytest.mark.parametrize(
    ("filename", "content_type", "data"),
    [
        ("photo.png", "image/png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"),
        ("photo.jpg", None, b"\xff\xd8\xff\xe0\x00\x10JFIF\x00"),
        ("archive.zip", "application/zip", _zip("readme.txt")),
        ("setup.exe", "application/octet-stream", b"MZ\x90\x00\x03\x00\x00\x00"),
        ("old.doc", "application/msword", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 8),
        (None, None, bytes(range(256))),
    ],
    ids=["png", "jpeg", "zip", "exe", "doc", "garbage"],
)
def test_files_of_other_types_are_unsupported(
    filename: str | None, content_type: str | None, data: bytes
) -> None:
    with pytest.raises(UnsupportedMediaType) as failure:
        to_markdown(data, filename=filename, content_type=content_type)

    assert failure.value.code == "unsupported_media_type"


def test_html_becomes_markdown_without_scripts_styles_navigation_or_inlined_images() -> None:
    converted = to_markdown(_HTML.encode(), filename="guide.html", content_type=None)

    assert converted.media_type == HTML
    assert converted.title == "Deploy guide"
    assert converted.markdown == (
        "# Deploying\n\n"
        "Run `make_release` with **care**.\n\n"
        "See the diagram.\n\n"
        "## Steps\n\n"
        "- build\n- push\n\n"
        '````python\nprint("```")\n````\n\n'
        "| flag | meaning |\n| --- | --- |\n| -x | a\\|b |"
    )


def test_an_html_title_falls_back_to_the_first_h1() -> None:
    converted = to_markdown(
        b"<body><p>lead</p><h1>Main <em>topic</em></h1><h1>Other</h1></body>",
        filename=None,
        content_type="text/html",
    )

    assert converted.title == "Main topic"
    assert converted.markdown == "lead\n\n# Main *topic*\n\n# Other"


def test_html_without_any_tag_is_converted_as_text() -> None:
    converted = to_markdown(b"index.html", filename="page.html", content_type=None)

    assert converted.markdown == "index.html"
    assert converted.title is None


def test_pdf_text_is_extracted_page_by_page_with_its_metadata_title() -> None:
    converted = to_markdown(_RUNBOOK_PDF, filename="runbook.pdf", content_type=None)

    assert converted == type(converted)(
        markdown="First page text.\nSecond line.\n\nPage two.",
        media_type=PDF,
        title="Runbook",
        page_starts=(0, 31),
    )


def test_a_pdf_without_a_metadata_title_has_none() -> None:
    converted = to_markdown(_pdf(_text("Hello.")), filename="a.pdf", content_type=None)

    assert converted.title is None


def test_a_pdf_without_a_text_layer_is_rejected() -> None:
    scanned = _pdf(b"0 0 m 100 100 l S")

    with pytest.raises(ValidationFailed) as failure:
        to_markdown(scanned, filename="scan.pdf", content_type=None)

    assert failure.value.code == "validation_error"


@pytest.mark.parametrize(
    "data",
    [b"%PDF-1.4\nnot really a pdf", _RUNBOOK_PDF[: len(_RUNBOOK_PDF) // 2], b"", b"\x00" * 64],
    ids=["garbage", "truncated", "empty", "zeros"],
)
def test_a_corrupt_pdf_is_rejected(data: bytes) -> None:
    with pytest.raises(ValidationFailed) as failure:
        to_markdown(data, filename="broken.pdf", content_type=None)

    assert failure.value.code == "validation_error"


def test_a_password_protected_pdf_is_rejected() -> None:
    locked = _encrypted(_RUNBOOK_PDF, user_password="secret")

    with pytest.raises(ValidationFailed) as failure:
        to_markdown(locked, filename="locked.pdf", content_type=None)

    assert failure.value.code == "validation_error"


def test_a_pdf_encrypted_without_a_user_password_is_read() -> None:
    restricted = _encrypted(_RUNBOOK_PDF, user_password="")

    converted = to_markdown(restricted, filename="restricted.pdf", content_type=None)

    assert converted.markdown == "First page text.\nSecond line.\n\nPage two."


def test_docx_headings_lists_and_tables_become_markdown() -> None:
    converted = to_markdown(_docx(), filename="manual.docx", content_type=None)

    assert converted.media_type == DOCX
    assert converted.markdown == (
        "# Operations Manual\n\n"
        "# Deploy\n\n"
        "Ship it   carefully.\n\n"
        "- build the image\n"
        "- push the image\n"
        "  - tag it\n"
        "    - a numbered paragraph without a list style\n\n"
        "## Rollback\n\n"
        "###### Deep\n\n"
        "| Step | Command |\n| --- | --- |\n| undo | make a\\|b |\n|  |  |\n\n"
        "The end."
    )


def test_a_docx_title_comes_from_its_properties_then_its_first_title_or_heading() -> None:
    named = to_markdown(_docx(title="Ops"), filename="manual.docx", content_type=None)
    unnamed = to_markdown(_docx(), filename="manual.docx", content_type=None)

    assert named.title == "Ops"
    assert unnamed.title == "Operations Manual"


@pytest.mark.parametrize(
    "data",
    [b"PK\x03\x04 definitely not a zip", _zip("readme.txt"), _docx()[:2000]],
    ids=["garbage", "zip-without-document", "truncated"],
)
def test_a_corrupt_docx_is_rejected(data: bytes) -> None:
    with pytest.raises(ValidationFailed) as failure:
        to_markdown(data, filename="broken.docx", content_type=None)

    assert failure.value.code == "validation_error"


@pytest.mark.parametrize(
    ("raw", "cleaned"),
    [
        ("  Release\x00 notes\n for 2.0 ", "Release notes for 2.0"),
        ("\x00 \n", None),
        (None, None),
        ("word " * 200, ("word " * 200)[:MAX_TITLE_CHARS].strip()),
    ],
)
def test_a_title_from_a_file_is_one_line_without_nul_and_not_too_long(
    raw: str | None, cleaned: str | None
) -> None:
    assert clean_title(raw) == cleaned


# --- bounds (over HTTP, with hostile files, in tests/documents/test_conversion_bounds.py) ----


def test_a_pdf_over_the_page_limit_is_refused_before_its_text_is_read() -> None:
    with pytest.raises(TooLarge, match="CORPUS_CONVERT_MAX_PDF_PAGES"):
        to_markdown(
            _RUNBOOK_PDF, filename="r.pdf", content_type=None, limits=Limits(max_pdf_pages=1)
        )
    assert to_markdown(
        _RUNBOOK_PDF, filename="r.pdf", content_type=None, limits=Limits(max_pdf_pages=2)
    )


def test_a_pdf_is_refused_once_its_pages_extract_past_the_character_limit() -> None:
    pages = [_text("x" * 600) for _ in range(3)]
    limits = Limits(max_chars=1000)
    with pytest.raises(TooLarge, match="CORPUS_MAX_DOCUMENT_CHARS"):
        to_markdown(_pdf(*pages), filename="long.pdf", content_type=None, limits=limits)


def test_a_docx_whose_parts_inflate_past_the_limit_is_refused() -> None:
    data = _docx()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        inflated = sum(member.file_size for member in archive.infolist())
    limits = Limits(max_inflated_bytes=inflated - 1)
    with pytest.raises(TooLarge, match="CORPUS_CONVERT_MAX_INFLATED_MB"):
        to_markdown(data, filename="manual.docx", content_type=None, limits=limits)
    assert to_markdown(data, filename="manual.docx", content_type=None)


def test_html_nested_past_the_depth_limit_is_refused_and_within_it_converts() -> None:
    def nested(depth: int) -> bytes:
        return b"<div>" * depth + b"deep" + b"</div>" * depth

    with pytest.raises(ValidationFailed, match="CORPUS_CONVERT_MAX_HTML_DEPTH"):
        to_markdown(
            nested(60), filename="d.html", content_type=None, limits=Limits(max_html_depth=50)
        )
    converted = to_markdown(
        nested(250), filename="d.html", content_type=None, limits=Limits(max_html_depth=250)
    )
    assert converted.markdown == "deep"


def test_table_spans_are_counted_as_they_convert_and_refused_past_the_character_limit() -> None:
    # 2,400 spanned columns pass the first count over the text (two characters each, 4,800);
    # the converter's count adds the first row's rule (three more each) and refuses the table.
    row = "<tr>" + '<td colspan="400">x</td>' * 3 + "</tr>"
    html = f"<table>{row}{row}</table>".encode()
    assert to_markdown(html, filename="t.html", content_type=None, limits=Limits(max_chars=20_000))
    with pytest.raises(TooLarge, match="CORPUS_MAX_DOCUMENT_CHARS"):
        to_markdown(html, filename="t.html", content_type=None, limits=Limits(max_chars=5000))


@pytest.mark.parametrize(
    "source",
    [
        "#\tTabbed title\n\nText.",
        "```a`b\n# After inline code, not a fence\n\nText.",
        "~~~\n# in code\n~~~~~\n# After a longer closing fence\n\nText.",
        "  # Indented, with closing hashes ##\n\nText.",
    ],
)
def test_a_files_title_is_the_heading_its_chunks_sit_under(source: str) -> None:
    # Conversion reads the title and chunking the heading paths from one recogniser: they
    # disagreed on tabs and backtick info strings.
    converted = to_markdown(source.encode(), filename="notes.md", content_type=None)
    paths = [piece.heading_path for piece in chunk_markdown(converted.markdown)]
    first_top = next(path[0] for path in paths if path)
    assert converted.title == first_top


def _with_outline(pdf: bytes, entries: list[tuple[str, int, int]]) -> bytes:
    """`pdf` with an outline: (title, page index, depth from 1) in order."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    parents: dict[int, Any] = {}
    for title, page, depth in entries:
        parents[depth] = writer.add_outline_item(
            title=title, page_number=page, parent=parents.get(depth - 1)
        )
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_a_pdf_has_headings_from_its_outline_and_no_running_headers_or_footers() -> None:
    pages = [
        _text("ACME Handbook", "Deploying", "Ship with make release.", "Page 1 of 4"),
        _text("ACME Handbook", "Rolling back", "Run make rollback.", "Page 2 of 4"),
        _text("ACME Handbook", "Checks after a rollback.", "Page 3 of 4"),
        _text("ACME Handbook", "Watch the dashboards.", "Page 4 of 4"),
    ]
    pdf = _with_outline(
        _pdf(*pages, title="Handbook"),
        [("Deploying", 0, 1), ("Rolling back", 1, 2), ("Monitoring", 3, 1)],
    )

    converted = to_markdown(pdf, filename="handbook.pdf", content_type=None)

    assert "ACME Handbook" not in converted.markdown
    assert "Page 2 of 4" not in converted.markdown
    assert converted.markdown.splitlines()[:2] == ["# Deploying", "Ship with make release."]
    assert "## Rolling back\nRun make rollback." in converted.markdown
    # An entry whose title is not a line of its page opens the page.
    assert "# Monitoring\n\nWatch the dashboards." in converted.markdown
    pieces = chunk_markdown(converted.markdown, target_tokens=200, overlap_tokens=0)
    assert ["Deploying", "Rolling back"] in [list(p.heading_path) for p in pieces]


def test_a_pdf_knows_where_each_page_starts_and_an_empty_page_starts_where_the_next_does() -> None:
    pdf = _pdf(
        _text("Alpha opens the book."), _text(), _text("Gamma is on page three.", "And more.")
    )

    converted = to_markdown(pdf, filename="pages.pdf", content_type=None)

    assert converted.markdown == "Alpha opens the book.\n\nGamma is on page three.\nAnd more."
    third = converted.markdown.index("Gamma")
    assert converted.page_starts == (0, third, third)
    assert to_markdown(b"# Notes\n\nText.", filename="n.md", content_type=None).page_starts is None
