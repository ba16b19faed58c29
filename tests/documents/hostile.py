"""Hostile files, built byte by byte: each is small on the wire and expensive to convert."""

from __future__ import annotations

import zlib

_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def _stream(content: bytes) -> bytes:
    packed = zlib.compress(content, 9)
    return b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(packed), packed)


def _pdf(pages: int, content: bytes, *, shared: bool = True) -> bytes:
    """A PDF of `pages` pages showing `content`, one Flate stream shared by every page (or one
    stream per page), with its cross-reference table."""
    first_page = 5 if shared else 4
    step = 1 if shared else 2
    kids = b" ".join(b"%d 0 R" % (first_page + step * index) for index in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
        _FONT,
    ]
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
    page += b"/Resources << /Font << /F1 3 0 R >> >> >>"
    if shared:
        objects.append(_stream(content))
        objects += [page % 4] * pages
    else:
        packed = _stream(content)
        for index in range(pages):
            objects += [page % (first_page + step * index + 1), packed]
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def _text_operators(size: int) -> bytes:
    return b"BT /F1 12 Tf 72 712 Td " + b"(bomb) Tj " * (size // 10) + b"ET"


def shared_stream_pdf(pages: int = 200, inflated: int = 5_000_000) -> bytes:
    """Many pages sharing one Flate stream that inflates to MBs of text operators (tens of KB)."""
    return _pdf(pages, _text_operators(inflated))


def inflating_stream_pdf(inflated: int = 70_000_000) -> bytes:
    """One page whose one stream inflates to tens of MB (a few hundred KB)."""
    return _pdf(1, b"BT /F1 12 Tf 72 712 Td (hello) Tj ET" + b" " * inflated)


def many_pages_pdf(pages: int) -> bytes:
    """A PDF of `pages` one-word pages (a few bytes each)."""
    return _pdf(pages, b"BT /F1 12 Tf 72 712 Td (page) Tj ET")


def slow_pdf(pages: int, per_page: int) -> bytes:
    """Ordinary pages, each with its own modest stream: slow to read, within every bound."""
    return _pdf(pages, _text_operators(per_page), shared=False)


def colspan_html(cells: int = 40_000) -> bytes:
    """About 1 MB of table cells each spanning 1,000 columns."""
    return b"<html><body><table><tr>" + b'<td colspan="1000">x</td>' * cells + b"</tr></table>"


def deep_html(depth: int = 1000) -> bytes:
    """Elements nested `depth` levels deep."""
    return b"<html><body>" + b"<div>" * depth + b"deep" + b"</div>" * depth + b"</body></html>"
