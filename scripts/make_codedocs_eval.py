"""Build the code-documentation evaluation (`corpus eval --data codedocs`) from real technical
Markdown on disk: the long descriptions (READMEs) of the Python packages the project installs,
in their `*.dist-info/METADATA` files. Nobody wrote them for this test.

    .venv/bin/python scripts/make_codedocs_eval.py            # rewrites app/bench/codedocs/

Documents are the READMEs' sections (a heading and its text, titled "package: heading").
Queries are the identifiers their authors marked as code (`inline code` that holds a `_`, a
`.`, a `/`, `::`, a leading `-`, or camel case), found verbatim in one to three sections, each
asked three ways: as written (`add_argument`), by its words as a person would type them
("add argument"), and in a question ("how do I use add_argument"). A section is relevant when it
holds the identifier verbatim. The selection is deterministic: the same installed packages
(constraints.txt pins them) give the same files.
"""

from __future__ import annotations

import argparse
import email.parser
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "app" / "bench" / "codedocs"
# The project's own README is not someone else's documentation.
SKIP = {"corpus"}
_HEADING = re.compile(r"^(#{1,4})\s+(.+?)\s*#*\s*$")
_CODE = re.compile(r"(?<!`)`([^`\n]{3,60})`(?!`)")
_SHAPE = re.compile(r"[_./]|::|^-{1,2}[A-Za-z]|[a-z][A-Z]")
_NAME = re.compile(r"^-{0,2}[A-Za-z_][\w.\-/:]*[\w]$")
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
MIN_SECTION_CHARS = 300
MAX_SECTION_CHARS = 4000
MAX_RELEVANT = 3
MAX_IDENTIFIERS_PER_SECTION = 1


def _readmes(site: Path) -> list[tuple[str, str]]:
    """(package, Markdown README) of each installed package whose description is Markdown."""
    found = []
    for metadata in sorted(site.glob("*.dist-info/METADATA")):
        message = email.parser.Parser().parsestr(metadata.read_text(errors="replace"))
        name = message.get("Name", metadata.parent.name).lower()
        kind = message.get("Description-Content-Type", "")
        body = message.get_payload()
        if name in SKIP or "markdown" not in kind or not isinstance(body, str):
            continue
        found.append((name, body))
    return found


def _sections(package: str, readme: str) -> list[tuple[str, str]]:
    """(title, text) of each section of a README; fenced code stays in its section."""
    sections: list[tuple[str, list[str]]] = [(package, [])]
    fenced = False
    for line in readme.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        heading = None if fenced else _HEADING.match(line)
        if heading:
            sections.append((f"{package}: {heading.group(2).strip()}", []))
        else:
            sections[-1][1].append(line)
    kept = []
    for title, lines in sections:
        body = "\n".join(lines).strip()
        if MIN_SECTION_CHARS <= len(body) <= MAX_SECTION_CHARS:
            kept.append((title, body))
    return kept


def _words(identifier: str) -> str:
    return " ".join(w.lower() for w in _WORDS.findall(identifier))


def build(site: Path) -> tuple[list[dict[str, str]], list[dict[str, str]], list[tuple[str, str]]]:
    corpus: list[dict[str, str]] = []
    for package, readme in _readmes(site):
        for n, (title, body) in enumerate(_sections(package, readme)):
            corpus.append({"_id": f"{package}-{n}", "title": title, "text": body})
    holders: dict[str, set[str]] = defaultdict(set)
    marked: dict[str, list[str]] = defaultdict(list)
    for doc in corpus:
        for code in _CODE.findall(doc["text"]):
            code = code.strip().rstrip("()")
            if _NAME.match(code) and _SHAPE.search(code) and code not in marked[doc["_id"]]:
                marked[doc["_id"]].append(code)
    for identifier in {code for codes in marked.values() for code in codes}:
        for doc in corpus:
            if identifier in doc["text"]:
                holders[identifier].add(doc["_id"])
    queries: list[dict[str, str]] = []
    qrels: list[tuple[str, str]] = []
    asked: set[str] = set()
    for doc in corpus:
        chosen = [
            code
            for code in marked[doc["_id"]]
            if 1 <= len(holders[code]) <= MAX_RELEVANT and code.lower() not in asked
        ][:MAX_IDENTIFIERS_PER_SECTION]
        for code in chosen:
            asked.add(code.lower())
            forms = {"exact": code, "question": f"how do I use {code}"}
            words = _words(code)
            if len(words.split()) > 1:
                forms["words"] = words
            for kind, query in forms.items():
                query_id = f"{kind}-{len(queries)}"
                queries.append({"_id": query_id, "text": query})
                qrels.extend((query_id, holder) for holder in sorted(holders[code]))
    return corpus, queries, qrels


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--site",
        type=Path,
        default=next((ROOT / ".venv" / "lib").glob("python3*/site-packages")),
    )
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    corpus, queries, qrels = build(args.site)
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "corpus.jsonl").open("w") as handle:
        handle.writelines(json.dumps(doc, ensure_ascii=False) + "\n" for doc in corpus)
    with (args.out / "queries.jsonl").open("w") as handle:
        handle.writelines(json.dumps(query, ensure_ascii=False) + "\n" for query in queries)
    with (args.out / "qrels.tsv").open("w") as handle:
        handle.write("query-id\tcorpus-id\tscore\n")
        handle.writelines(f"{query}\t{doc}\t1\n" for query, doc in qrels)
    print(
        f"{len(corpus)} sections, {len(queries)} queries, {len(qrels)} judgments", file=sys.stderr
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
