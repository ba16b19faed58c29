"""PDFs built in a test, byte by byte: one page per content stream."""

from __future__ import annotations


def pdf(*contents: bytes, title: str | None = None) -> bytes:
    """A minimal valid PDF: one page per content stream, Helvetica as /F1, xref computed."""
    page_ids = [4 + 2 * i for i in range(len(contents))]
    kids = b" ".join(b"%d 0 R" % page_id for page_id in page_ids)
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(contents)),
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    for page_id, content in zip(page_ids, contents, strict=True):
        objects[page_id] = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (page_id + 1)
        )
        objects[page_id + 1] = b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content)
    info = b""
    if title is not None:
        objects[max(objects) + 1] = b"<< /Title (%s) >>" % title.encode("ascii")
        info = b" /Info %d 0 R" % max(objects)
    out = bytearray(b"%PDF-1.4\n")
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n%s\nendobj\n" % (number, objects[number])
    xref = len(out)
    size = max(objects) + 1
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    out += b"".join(b"%010d 00000 n \n" % offsets[number] for number in range(1, size))
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (size, info, xref)
    return bytes(out)


def text(*lines: str) -> bytes:
    """A content stream that shows each line below the previous one."""
    shown = b" 0 -14 Td ".join(b"(%s) Tj" % line.encode("ascii") for line in lines)
    return b"BT /F1 12 Tf 72 720 Td " + shown + b" ET"
