"""Uploaded files to Markdown, the one format chunking reads.

The type is taken from the file name, else the declared content type, else the bytes themselves;
each supported type has one converter, and every result is normalised the same way.

Files come from anyone who may upload, so every converter works within `Limits`, each checked
before the work it would cost: a PDF's pages and inflated bytes, the characters of output as
they accumulate, table-span amplification and nesting depth in HTML. This module runs in a
worker process (app.documents.worker) that also has a deadline and a memory cap.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import docx
from bs4 import BeautifulSoup, Tag
from docx.document import Document as DocxDocument
from docx.table import Table
from docx.text.paragraph import Paragraph
from markdownify import MarkdownConverter
from pypdf import PasswordType, PdfReader, apply_configuration
from pypdf.errors import LimitReachedError

from app.config import Settings
from app.errors import AppError, TooLarge, UnsupportedMediaType, ValidationFailed
from app.kit.markdown import title as markdown_title
from app.kit.types import MAX_TITLE_CHARS

MARKDOWN = "text/markdown"
PLAIN_TEXT = "text/plain"
HTML = "text/html"
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

SUPPORTED_MEDIA_TYPES = frozenset({MARKDOWN, PLAIN_TEXT, HTML, PDF, DOCX})

_BY_EXTENSION = {
    "md": MARKDOWN,
    "markdown": MARKDOWN,
    "txt": PLAIN_TEXT,
    "text": PLAIN_TEXT,
    "html": HTML,
    "htm": HTML,
    "pdf": PDF,
    "docx": DOCX,
}
_TEXT_TYPES = frozenset({MARKDOWN, PLAIN_TEXT})
# File name suffixes (with their dot, lower case) that name a supported type.
SUPPORTED_SUFFIXES = frozenset(f".{extension}" for extension in _BY_EXTENSION)
_BY_CONTENT_TYPE = {
    MARKDOWN: MARKDOWN,
    "text/x-markdown": MARKDOWN,
    PLAIN_TEXT: PLAIN_TEXT,
    HTML: HTML,
    "application/xhtml+xml": HTML,
    PDF: PDF,
    "application/x-pdf": PDF,
    DOCX: DOCX,
}
_UNSUPPORTED = (
    "unsupported file type: upload Markdown (.md), plain text (.txt), HTML (.html), "
    "PDF (.pdf) or Word (.docx)"
)

# Boilerplate and invisible content that would only add noise to retrieval.
_HTML_DROPPED = ["head", "script", "style", "nav", "noscript", "template"]
_DOCX_HEADING = re.compile(r"Heading ([1-9])")
# "List Bullet", "List Number 2", "List Paragraph": the number, if any, is the nesting level.
_DOCX_LIST_STYLE = re.compile(r"List\b.*?(?: ([2-9]))?")
_BLANK_LINES = re.compile(r"\n{4,}")
_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")
_BACKTICK_RUN = re.compile(r"`+")
_COLSPAN = re.compile(r"""colspan\s*=\s*["']?\s*(\d{1,9})""", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds of one conversion (their settings are named in the refusals)."""

    max_chars: int = 2_000_000
    max_pdf_pages: int = 2000
    max_inflated_bytes: int = 64 * 1024 * 1024
    max_html_depth: int = 128

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(
            max_chars=settings.max_document_chars,
            max_pdf_pages=settings.convert_max_pdf_pages,
            max_inflated_bytes=settings.convert_max_inflated_mb * 1024 * 1024,
            max_html_depth=settings.convert_max_html_depth,
        )

    def too_many_chars(self) -> TooLarge:
        return TooLarge(
            f"file: the document converts to more than {self.max_chars:,} characters "
            "(CORPUS_MAX_DOCUMENT_CHARS)"
        )

    def too_inflated(self, what: str) -> TooLarge:
        return TooLarge(
            f"file: {what} inflates to more than {self.max_inflated_bytes // 2**20} MB "
            "(CORPUS_CONVERT_MAX_INFLATED_MB)"
        )


@dataclass(frozen=True, slots=True)
class Converted:
    """A file as Markdown, with what was learned about it on the way."""

    markdown: str
    media_type: str
    title: str | None
    # A PDF's pages: where each starts in `markdown` (an empty page where the next starts);
    # None for other formats.
    page_starts: tuple[int, ...] | None = None


def to_markdown(
    data: bytes,
    *,
    filename: str | None,
    content_type: str | None,
    limits: Limits = Limits(),  # frozen, so one shared default is safe
) -> Converted:
    """Convert an uploaded file to normalised Markdown, within `limits`.

    Raises:
        UnsupportedMediaType: the file is of a type that cannot be converted.
        ValidationFailed: the file claims a supported type but cannot be read, or holds no text,
            or nests deeper than the limit.
        TooLarge: the file breaks a limit on pages, inflated bytes or characters.
    """
    media_type = _detect(data, filename, content_type)
    title: str | None
    if media_type == PDF:
        markdown, title = _from_pdf(data, limits)
    elif media_type == DOCX:
        markdown, title = _from_docx(data, limits)
    elif media_type == HTML:
        markdown, title = _from_html(_decode(data), limits)
    else:
        markdown, title = _decode(data), None
    if len(markdown) > limits.max_chars:
        raise limits.too_many_chars()
    markdown = _normalise(markdown)
    if not markdown:
        raise ValidationFailed("the document is empty")
    if media_type == MARKDOWN:
        title = markdown_title(markdown)
    page_starts = None
    if media_type == PDF:
        markdown, page_starts = _page_starts(markdown)
    return Converted(
        markdown=markdown, media_type=media_type, title=clean_title(title), page_starts=page_starts
    )


def is_text_type(filename: str | None, content_type: str | None) -> bool:
    """Whether the file's name or declared type says Markdown or plain text: formats read by
    our own decoding and normalising alone, no parsing library involved."""
    if filename:
        _, dot, extension = filename.rpartition(".")
        if dot and extension.lower() in _BY_EXTENSION:
            return _BY_EXTENSION[extension.lower()] in _TEXT_TYPES
    declared = (content_type or "").partition(";")[0].strip().lower()
    return _BY_CONTENT_TYPE.get(declared) in _TEXT_TYPES


def clean_title(title: str | None) -> str | None:
    """A title from a file's metadata or first heading, fit for a document: one line, no NUL,
    at most MAX_TITLE_CHARS."""
    if title is None:
        return None
    title = " ".join(title.replace("\x00", "").split())[:MAX_TITLE_CHARS].strip()
    return title or None


def _detect(data: bytes, filename: str | None, content_type: str | None) -> str:
    if filename:
        _, dot, extension = filename.rpartition(".")
        if dot and extension.lower() in _BY_EXTENSION:
            return _BY_EXTENSION[extension.lower()]
    if content_type:
        declared = content_type.partition(";")[0].strip().lower()
        if declared in _BY_CONTENT_TYPE:
            return _BY_CONTENT_TYPE[declared]
    if data.startswith(b"%PDF-"):
        return PDF
    if data.startswith(b"PK\x03\x04") and _is_docx(data):
        return DOCX
    head = data[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith((b"<!doctype html", b"<html")):
        return HTML
    if b"\x00" not in data:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            return PLAIN_TEXT
    raise UnsupportedMediaType(_UNSUPPORTED)


def _is_docx(data: bytes) -> bool:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return "word/document.xml" in archive.namelist()
    except (zipfile.BadZipFile, OSError, EOFError, ValueError):
        return False


def _decode(data: bytes) -> str:
    if b"\x00" in data:
        raise ValidationFailed("the file contains NUL bytes: it is binary, not text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationFailed(
            "the file is not valid UTF-8 text", details={"byte_offset": exc.start}
        ) from exc
    return text.removeprefix("\ufeff")


def _normalise(markdown: str) -> str:
    # A NUL in text extracted from a PDF or DOCX is an extraction artefact (PostgreSQL's text
    # cannot hold one); text files with NUL bytes were refused as binary before this.
    markdown = markdown.replace("\x00", "")
    markdown = markdown.replace("\r\n", "\n").replace("\r", "\n")
    markdown = "\n".join(line.rstrip() for line in markdown.split("\n"))
    return _BLANK_LINES.sub("\n\n\n", markdown).strip()


# --- HTML -----------------------------------------------------------------------------------


class _HtmlToMarkdown(MarkdownConverter):
    """markdownify, with fences that survive code containing backticks and table cells that
    keep their pipes, and a count of the characters that table spans add (a cell spanning
    1,000 columns becomes 1,000 pipes, and a header row's rule 1,000 more cells), refused as
    soon as they pass the limit rather than after the whole table is built."""

    def __init__(self, *, limits: Limits, **options: Any) -> None:
        super().__init__(**options)
        self._limits = limits
        self._spanned = 0

    def _count(self, added: int) -> None:
        self._spanned += added
        if self._spanned > self._limits.max_chars:
            raise _too_spanned(self._limits)

    def convert_pre(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        if not text.strip():
            return ""
        code = _LEADING_BLANK_LINES.sub("", text).rstrip()
        longest = max((len(run) for run in _BACKTICK_RUN.findall(code)), default=0)
        fence = "`" * max(3, longest + 1)
        return f"\n\n{fence}{_code_language(el)}\n{code}\n{fence}\n\n"

    def convert_td(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        return self._table_cell(el, text)

    def convert_th(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        return self._table_cell(el, text)

    def convert_tr(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        # The rule under a table's first row has one cell per spanned column: count it before
        # markdownify builds it.
        if el.find_previous_sibling() is None:
            self._count(3 * sum(_colspan(cell) for cell in el.find_all(["td", "th"])))
        row: str = super().convert_tr(el, text, parent_tags)  # type: ignore[misc]  # markdownify's stubs omit convert_tr
        return row

    def _table_cell(self, cell: Tag, text: str) -> str:
        # markdownify's own cells, plus escaped pipes: GFM ends a cell at any unescaped pipe,
        # even inside a code span.
        colspan = _colspan(cell)
        self._count(2 * colspan)
        return " " + text.strip().replace("\n", " ").replace("|", r"\|") + " |" * colspan


def _too_spanned(limits: Limits) -> TooLarge:
    return TooLarge(
        f"file: the HTML's table spans expand to more than {limits.max_chars:,} characters "
        "(CORPUS_MAX_DOCUMENT_CHARS)"
    )


def _colspan(cell: Tag) -> int:
    # markdownify's reading of the attribute (HTML caps a span at 1,000 columns).
    span = str(cell.get("colspan", "1"))
    return max(1, min(1000, int(span))) if span.isdigit() else 1


def _code_language(pre: Tag) -> str:
    """The language of a `<pre>` from the usual `language-x` / `lang-x` class names."""
    code = pre.find("code")
    for element in (pre, code):
        if isinstance(element, Tag):
            for name in element.get_attribute_list("class"):
                for prefix in ("language-", "lang-"):
                    if name and name.startswith(prefix) and len(name) > len(prefix):
                        return str(name[len(prefix) :])
    return ""


def _from_html(html: str, limits: Limits) -> tuple[str, str | None]:
    if "<" not in html:
        # Tagless input that looks like a path or URL makes BeautifulSoup warn; a wrapper
        # changes nothing in the Markdown and keeps the warning (an error in tests) away.
        html = f"<div>{html}</div>"
    # Every spanned column becomes at least one pipe: a first count over the text refuses a
    # table of wide spans before the (slow) parse; the converter counts exactly as it goes.
    spanned = sum(min(1000, int(span)) for span in _COLSPAN.findall(html))
    if 2 * spanned > limits.max_chars:
        raise _too_spanned(limits)
    soup = _DepthBoundedSoup(html, limits.max_html_depth)
    title = _tag_text(soup.title) or _tag_text(soup.find("h1"))
    for element in soup.find_all(_HTML_DROPPED):
        element.decompose()
    for image in soup.find_all("img", src=re.compile(r"^\s*data:", re.IGNORECASE)):
        # An inlined image would put kilobytes of base64 into the text that gets embedded.
        image.replace_with(str(image.get("alt") or ""))
    converter = _HtmlToMarkdown(
        limits=limits,
        heading_style="atx",
        bullets="-",
        # Escaped underscores and asterisks would stop `snake_case` matching in keyword search.
        escape_underscores=False,
        escape_asterisks=False,
    )
    return converter.convert_soup(soup), title


class _DepthBoundedSoup(BeautifulSoup):
    """html.parser's tree, refused as soon as an element opens deeper than markdownify can
    recurse (the parse itself has no recursion, but it is the slow part, so the check comes
    while it runs rather than after)."""

    def __init__(self, html: str, max_depth: int) -> None:
        self._max_depth = max_depth
        super().__init__(html, "html.parser")

    def pushTag(self, tag: Tag) -> None:
        super().pushTag(tag)
        # The stack holds the document itself below the outermost element.
        if len(self.tagStack) - 1 > self._max_depth:
            raise ValidationFailed(
                f"file: the HTML nests elements more than {self._max_depth} deep "
                "(CORPUS_CONVERT_MAX_HTML_DEPTH)"
            )


def _tag_text(element: object) -> str | None:
    if not isinstance(element, Tag):
        return None
    return " ".join(element.get_text(" ").split()) or None


# --- PDF ------------------------------------------------------------------------------------


def _from_pdf(data: bytes, limits: Limits) -> tuple[str, str | None]:
    inflated = limits.max_inflated_bytes
    # pypdf's own decompression limits, per stream, whatever the filter.
    bounded = apply_configuration(
        zlib_maximum_output_length=inflated,
        lzw_maximum_output_length=inflated,
        run_length_maximum_output_length=inflated,
        brotli_maximum_output_length=inflated,
        jbig2_maximum_output_length=inflated,
        array_based_stream_maximum_output_length=inflated,
        maximum_declared_stream_length=inflated,
        stream_decoding_work_maximum_length=inflated,
    )
    try:
        with bounded:
            reader = PdfReader(io.BytesIO(data))
            locked = reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED
            pages = [] if locked else _pdf_pages(reader, limits)
            headings = [] if locked else _outline(reader)
            metadata = None if locked else reader.metadata
            title = metadata.title if metadata is not None else None
    except AppError:
        raise
    except LimitReachedError as exc:
        raise limits.too_inflated("a stream in the PDF") from exc
    # pypdf meets malformed files with many exception types (its own, ValueError, KeyError,
    # zlib.error, ...); all of them mean the same to the uploader.
    except Exception as exc:
        raise ValidationFailed(f"could not read the PDF: {exc}") from exc
    if locked:
        raise ValidationFailed("could not read the PDF: it is protected by a password")
    pages = _with_headings(_without_running_lines(pages), headings)
    pages = [page.replace(_PAGE_OPEN, "").replace(_PAGE_CLOSE, "").strip() for page in pages]
    if not any(pages):
        raise ValidationFailed(
            "the PDF has no text layer (scanned pages would need OCR, which is not supported)"
        )
    # Each page opens with a marker of its number, which survives normalising (it starts a
    # line and is no whitespace) and is taken out again by `_page_starts`.
    text = "\n\n".join(
        f"{_PAGE_OPEN}{number}{_PAGE_CLOSE}{page}" for number, page in enumerate(pages) if page
    )
    return text, (title.strip() or None) if isinstance(title, str) else None


# Private-use characters: extracted text holding them loses them, so a marker is always ours.
_PAGE_OPEN = "\ue000"
_PAGE_CLOSE = "\ue001"
_PAGE_MARKER = re.compile(f"{_PAGE_OPEN}(\\d+){_PAGE_CLOSE}")


def _page_starts(marked: str) -> tuple[str, tuple[int, ...]]:
    """The text without its page markers, and where each page starts in it (a page without
    text where the next page starts)."""
    parts: list[str] = []
    found: dict[int, int] = {}
    length = previous = 0
    for match in _PAGE_MARKER.finditer(marked):
        parts.append(marked[previous : match.start()])
        length += match.start() - previous
        found[int(match.group(1))] = length
        previous = match.end()
    parts.append(marked[previous:])
    text = "".join(parts)
    starts: list[int] = []
    following = len(text)
    for number in range(max(found, default=-1), -1, -1):
        following = found.get(number, following)
        starts.append(following)
    return text, tuple(reversed(starts))


# The most outline entries read: a contents of a few hundred headings is a long book; the
# bound keeps a crafted outline of millions of entries from costing more than its pages.
MAX_OUTLINE_ENTRIES = 2_000
# A line at the top or bottom of this share of the pages (numbers aside) is a running header
# or footer, from at least this many pages.
RUNNING_SHARE = 0.5
RUNNING_MIN_PAGES = 3
_DIGITS = re.compile(r"\d+")


def _outline(reader: PdfReader) -> list[tuple[int, int, str]]:
    """The PDF's outline (its bookmarks) as (page index, depth from 1, title), in order; none
    when it has none or it cannot be read (the text is still worth having without it)."""
    found: list[tuple[int, int, str]] = []

    def walk(items: Any, depth: int) -> None:
        for item in items:
            if len(found) >= MAX_OUTLINE_ENTRIES:
                return
            if isinstance(item, list):
                walk(item, depth + 1)
                continue
            title = " ".join(str(getattr(item, "title", "") or "").split())
            page = reader.get_destination_page_number(item)
            if title and page is not None and page >= 0:
                found.append((page, depth, title))

    try:
        walk(reader.outline, 1)
    except Exception:  # a malformed outline is no reason to refuse the text
        return []
    return found


def _running_key(line: str) -> str:
    return _DIGITS.sub("#", " ".join(line.split()).lower())


def _without_running_lines(pages: list[str]) -> list[str]:
    """The pages without their running headers and footers: a first or last line that, with
    its numbers read as any number ("Page 3 of 9"), opens or closes at least half the pages."""
    if len(pages) < RUNNING_MIN_PAGES:
        return pages
    split = [[line for line in page.splitlines() if line.strip()] for page in pages]
    counts: dict[tuple[str, str], int] = {}
    for lines in split:
        ends = (
            {("top", _running_key(lines[0])), ("bottom", _running_key(lines[-1]))}
            if lines
            else set()
        )
        for end in ends:
            counts[end] = counts.get(end, 0) + 1
    running = {
        end for end, n in counts.items() if n >= max(RUNNING_MIN_PAGES, RUNNING_SHARE * len(pages))
    }
    if not running:
        return pages
    kept = []
    for lines in split:
        if lines and ("top", _running_key(lines[0])) in running:
            lines = lines[1:]
        if lines and ("bottom", _running_key(lines[-1])) in running:
            lines = lines[:-1]
        kept.append("\n".join(lines))
    return kept


def _with_headings(pages: list[str], headings: list[tuple[int, int, str]]) -> list[str]:
    """The outline's entries as Markdown headings in their pages: a line that reads as the
    entry's title becomes the heading, else the heading opens its page (before the text of a
    previous entry on the same page that was placed already)."""
    if not headings:
        return pages
    result = [page.splitlines() for page in pages]
    opening: dict[int, list[str]] = {}
    for page, depth, title in headings:
        if page >= len(result):
            continue
        heading = f"{'#' * min(depth, 6)} {title}"
        wanted = " ".join(title.split()).lower()
        lines = result[page]
        for i, line in enumerate(lines):
            if " ".join(line.split()).lower() == wanted:
                lines[i] = heading
                break
        else:
            opening.setdefault(page, []).append(heading)
    return [
        "\n\n".join([*opening.get(i, []), "\n".join(lines)]) if i in opening else "\n".join(lines)
        for i, lines in enumerate(result)
    ]


def _pdf_pages(reader: PdfReader, limits: Limits) -> list[str]:
    """Each page's text, within the limits: the page count first, then the bytes of every
    page's content once inflated (pages may share one stream, so a small file can hold
    gigabytes; pypdf caches the inflated stream, so this costs one inflation per stream),
    then the characters extracted, page by page."""
    count = len(reader.pages)
    if count > limits.max_pdf_pages:
        raise TooLarge(
            f"file: the PDF has {count:,} pages; the limit is {limits.max_pdf_pages:,} "
            "(CORPUS_CONVERT_MAX_PDF_PAGES)"
        )
    content = 0
    for page in reader.pages:
        stream = page.get_contents()
        content += len(stream.get_data()) if stream is not None else 0
        if content > limits.max_inflated_bytes:
            raise limits.too_inflated("the content of the PDF's pages")
    texts: list[str] = []
    chars = 0
    for page in reader.pages:
        text = page.extract_text()
        chars += len(text)
        if chars > limits.max_chars:
            raise limits.too_many_chars()
        texts.append(text)
    return texts


# --- DOCX -----------------------------------------------------------------------------------


def _from_docx(data: bytes, limits: Limits) -> tuple[str, str | None]:
    _check_zip(data, limits)
    try:
        document = docx.Document(io.BytesIO(data))
        blocks = list(_docx_blocks(document))
        core_title = document.core_properties.title
    # A damaged package fails anywhere from the zip layer to the XML of one paragraph.
    except Exception as exc:
        raise ValidationFailed(f"could not read the Word document: {exc}") from exc
    title = core_title.strip() if isinstance(core_title, str) and core_title.strip() else None
    if title is None:
        title = next((text.removeprefix("# ") for kind, text in blocks if kind == "title"), None)
    parts: list[str] = []
    chars = 0
    previous = ""
    for kind, text in blocks:
        # Items of one list stay on consecutive lines so that they read as one list.
        separator = "\n" if kind == previous == "item" else "\n\n"
        part = (separator if parts else "") + text
        chars += len(part)
        if chars > limits.max_chars:
            raise limits.too_many_chars()
        parts.append(part)
        previous = kind
    return "".join(parts), title


def _check_zip(data: bytes, limits: Limits) -> None:
    """Refuse a package whose parts inflate past the limit. zipfile reads no more than a
    member's declared size, so the declared sizes bound what python-docx can inflate."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            declared = sum(member.file_size for member in archive.infolist())
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise ValidationFailed(f"could not read the Word document: {exc}") from exc
    if declared > limits.max_inflated_bytes:
        raise limits.too_inflated("the Word document")


def _docx_blocks(document: DocxDocument) -> Iterator[tuple[str, str]]:
    """(kind, markdown) for each paragraph and table; kind is "title", "heading", "item" or
    "text" (a title is a level-one heading that can name the document)."""
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            table = _docx_table(block)
            if table:
                yield "text", table
            continue
        text = block.text.strip()
        if not text:
            continue
        style = block.style.name if block.style is not None else None
        heading = _DOCX_HEADING.fullmatch(style or "")
        if style == "Title" or (heading is not None and heading.group(1) == "1"):
            yield "title", "# " + " ".join(text.split())
        elif heading is not None:
            yield "heading", "#" * min(6, int(heading.group(1))) + " " + " ".join(text.split())
        else:
            level = _list_level(block)
            list_style = _DOCX_LIST_STYLE.fullmatch(style or "")
            if level is None and list_style is not None:
                level = int(list_style.group(1) or "1") - 1
            yield ("text", text) if level is None else ("item", "  " * level + "- " + text)


def _list_level(paragraph: Paragraph) -> int | None:
    """The numbering level of a paragraph, None when it is not numbered.

    python-docx has no public API for numbering, and lists made without a list style (Google
    Docs exports, the toolbar button in some editors) are only recognisable by it.
    """
    levels: Callable[[str], list[str]] = paragraph._p.xpath
    if not levels("./w:pPr/w:numPr"):
        return None
    values = levels("./w:pPr/w:numPr/w:ilvl/@w:val")
    return int(values[0]) if values and str(values[0]).isdigit() else 0


def _docx_table(table: Table) -> str:
    rows = [[_docx_cell(cell.text) for cell in row.cells] for row in table.rows]
    width = max((len(row) for row in rows), default=0)
    if width == 0:
        return ""
    lines = []
    for index, row in enumerate(rows):
        lines.append("| " + " | ".join(row + [""] * (width - len(row))) + " |")
        if index == 0:
            lines.append("|" + " --- |" * width)
    return "\n".join(lines)


def _docx_cell(text: str) -> str:
    return " ".join(text.split()).replace("|", r"\|")
