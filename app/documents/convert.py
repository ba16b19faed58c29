"""Uploaded files to Markdown, the one format chunking reads.

The type is taken from the file name, else the declared content type, else the bytes themselves;
each supported type has one converter, and every result is normalised the same way.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import docx
from bs4 import BeautifulSoup, Tag
from docx.document import Document as DocxDocument
from docx.table import Table
from docx.text.paragraph import Paragraph
from markdownify import MarkdownConverter
from pypdf import PasswordType, PdfReader

from app.documents.schemas import MAX_TITLE_CHARS
from app.errors import UnsupportedMediaType, ValidationFailed

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
_FENCE = re.compile(r"(`{3,}|~{3,})")
_TITLE_HEADING = re.compile(r" {0,3}# +(.*?)(?: +#+)? *")
_DOCX_HEADING = re.compile(r"Heading ([1-9])")
# "List Bullet", "List Number 2", "List Paragraph": the number, if any, is the nesting level.
_DOCX_LIST_STYLE = re.compile(r"List\b.*?(?: ([2-9]))?")
_BLANK_LINES = re.compile(r"\n{4,}")
_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")
_BACKTICK_RUN = re.compile(r"`+")


@dataclass(frozen=True, slots=True)
class Converted:
    """A file as Markdown, with what was learned about it on the way."""

    markdown: str
    media_type: str
    title: str | None


def to_markdown(data: bytes, *, filename: str | None, content_type: str | None) -> Converted:
    """Convert an uploaded file to normalised Markdown.

    Raises:
        UnsupportedMediaType: the file is of a type that cannot be converted.
        ValidationFailed: the file claims a supported type but cannot be read, or holds no text.
    """
    media_type = _detect(data, filename, content_type)
    title: str | None
    if media_type == PDF:
        markdown, title = _from_pdf(data)
    elif media_type == DOCX:
        markdown, title = _from_docx(data)
    elif media_type == HTML:
        markdown, title = _from_html(_decode(data))
    else:
        markdown, title = _decode(data), None
    markdown = _normalise(markdown)
    if not markdown:
        raise ValidationFailed("the document is empty")
    if media_type == MARKDOWN:
        title = _markdown_title(markdown)
    return Converted(markdown=markdown, media_type=media_type, title=clean_title(title))


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


def _markdown_title(markdown: str) -> str | None:
    """The text of the first level-one ATX heading that is not inside a code fence."""
    fence: str | None = None
    for line in markdown.split("\n"):
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith(fence) and stripped == fence[0] * len(stripped):
                fence = None
            continue
        opener = _FENCE.match(stripped)
        if opener is not None:
            fence = opener.group(1)
            continue
        heading = _TITLE_HEADING.fullmatch(line)
        if heading is not None and heading.group(1).strip():
            return heading.group(1).strip()
    return None


# --- HTML -----------------------------------------------------------------------------------


class _HtmlToMarkdown(MarkdownConverter):
    """markdownify, with fences that survive code containing backticks and table cells that
    keep their pipes."""

    def convert_pre(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        if not text.strip():
            return ""
        code = _LEADING_BLANK_LINES.sub("", text).rstrip()
        longest = max((len(run) for run in _BACKTICK_RUN.findall(code)), default=0)
        fence = "`" * max(3, longest + 1)
        return f"\n\n{fence}{_code_language(el)}\n{code}\n{fence}\n\n"

    def convert_td(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        return _table_cell(el, text)

    def convert_th(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        return _table_cell(el, text)


def _table_cell(cell: Tag, text: str) -> str:
    # markdownify's own cells, plus escaped pipes: GFM ends a cell at any unescaped pipe, even
    # inside a code span.
    span = str(cell.get("colspan", "1"))
    colspan = max(1, min(1000, int(span))) if span.isdigit() else 1
    return " " + text.strip().replace("\n", " ").replace("|", r"\|") + " |" * colspan


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


def _from_html(html: str) -> tuple[str, str | None]:
    if "<" not in html:
        # Tagless input that looks like a path or URL makes BeautifulSoup warn; a wrapper
        # changes nothing in the Markdown and keeps the warning (an error in tests) away.
        html = f"<div>{html}</div>"
    soup = BeautifulSoup(html, "html.parser")
    title = _tag_text(soup.title) or _tag_text(soup.find("h1"))
    for element in soup.find_all(_HTML_DROPPED):
        element.decompose()
    for image in soup.find_all("img", src=re.compile(r"^\s*data:", re.IGNORECASE)):
        # An inlined image would put kilobytes of base64 into the text that gets embedded.
        image.replace_with(str(image.get("alt") or ""))
    converter = _HtmlToMarkdown(
        heading_style="atx",
        bullets="-",
        # Escaped underscores and asterisks would stop `snake_case` matching in keyword search.
        escape_underscores=False,
        escape_asterisks=False,
    )
    return converter.convert_soup(soup), title


def _tag_text(element: object) -> str | None:
    if not isinstance(element, Tag):
        return None
    return " ".join(element.get_text(" ").split()) or None


# --- PDF ------------------------------------------------------------------------------------


def _from_pdf(data: bytes) -> tuple[str, str | None]:
    try:
        reader = PdfReader(io.BytesIO(data))
        locked = reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED
        pages = [] if locked else [page.extract_text() for page in reader.pages]
        metadata = None if locked else reader.metadata
        title = metadata.title if metadata is not None else None
    # pypdf meets malformed files with many exception types (its own, ValueError, KeyError,
    # zlib.error, ...); all of them mean the same to the uploader.
    except Exception as exc:
        raise ValidationFailed(f"could not read the PDF: {exc}") from exc
    if locked:
        raise ValidationFailed("could not read the PDF: it is protected by a password")
    text = "\n\n".join(page.strip() for page in pages if page.strip())
    if not text:
        raise ValidationFailed(
            "the PDF has no text layer (scanned pages would need OCR, which is not supported)"
        )
    return text, (title.strip() or None) if isinstance(title, str) else None


# --- DOCX -----------------------------------------------------------------------------------


def _from_docx(data: bytes) -> tuple[str, str | None]:
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
    markdown = ""
    previous = ""
    for kind, text in blocks:
        # Items of one list stay on consecutive lines so that they read as one list.
        separator = "\n" if kind == previous == "item" else "\n\n"
        markdown += (separator if markdown else "") + text
        previous = kind
    return markdown, title


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
