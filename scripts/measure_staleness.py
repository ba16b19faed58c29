"""How often the stale flag is right, measured on a repository's own history (issue #35).

    .venv/bin/python scripts/measure_staleness.py /path/to/repo [--json]

The signal is the one a sync computes (`app.sources.stale`): a version of a Markdown file may be
stale when a later commit changed code it names (a path, or a distinctive identifier on a
changed line of a file that is not Markdown). The history is replayed version by version: each
version of each document is judged against the commits after it and before the document's next
change (or the branch's head).

What counts as right, with no one to ask: a flag is *confirmed* when the document's next edit
touches what the flag named (its changed lines mention one of the flagged paths or
identifiers): the authors did find the text behind that code, and fixed it. A flagged version
whose next edit touches none of the flagged names, or that is never edited again, is counted
unconfirmed. Precision is confirmed over flagged versions (with a next edit). Recall is the
share of the versions whose next edit mentions a name the code changed in between (a name the
document held, as the signal reads names) that were flagged; by construction of the proxy it
measures the name reading's reach, not people's judgement.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from app.sources import stale
from app.sources.files import selected
from app.sources.git import Commit, commits_since


@dataclass
class Counts:
    versions: int = 0
    flagged: int = 0
    flagged_then_edited: int = 0
    confirmed: int = 0
    edits_touching_changed_names: int = 0
    of_those_flagged: int = 0


def _show(repo: Path, sha: str, path: str) -> str | None:
    done = subprocess.run(
        ["git", "show", f"{sha}:{path}"], cwd=repo, capture_output=True, text=True, check=False
    )
    return done.stdout if done.returncode == 0 else None


def _is_document(path: str) -> bool:
    return selected(path, [], [])


def _mentions(lines: list[str], names: set[str]) -> bool:
    text = "\n".join(lines).lower()
    return any(name in text for name in names)


async def measure(repo: Path) -> dict[str, object]:
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    newest_first = await commits_since(repo, head, None)
    history: list[Commit] = list(reversed(newest_first))  # oldest first
    counts = Counts()
    documents = sorted(
        {path for commit in history for path in commit.changes if path.endswith(".md")}
    )
    for path in documents:
        versions = [at for at, commit in enumerate(history) if path in commit.changes]
        for number, at in enumerate(versions):
            content = _show(repo, history[at].sha, path)
            if content is None:
                continue  # the commit deleted it
            counts.versions += 1
            named = stale.names(content)
            until = versions[number + 1] if number + 1 < len(versions) else len(history)
            between = history[at + 1 : until]
            flags = [
                found
                for commit in between
                if (found := stale.finding(commit, named, _is_document)) is not None
            ]
            flagged_names = {name for flag in flags for name in flag["identifiers"]}
            flagged_names |= {name.lower() for flag in flags for name in flag["paths"]}
            changed_names: set[str] = set()
            for commit in between:
                paths, identifiers = stale.commit_names(commit, _is_document)
                changed_names |= (paths | identifiers) & set(named)
            next_edit = history[until].changes.get(path, []) if until < len(history) else None
            if flags:
                counts.flagged += 1
                if next_edit is not None:
                    counts.flagged_then_edited += 1
                    if _mentions(next_edit, flagged_names):
                        counts.confirmed += 1
            if next_edit is not None and changed_names and _mentions(next_edit, changed_names):
                counts.edits_touching_changed_names += 1
                if flags:
                    counts.of_those_flagged += 1
    precision = counts.confirmed / counts.flagged_then_edited if counts.flagged_then_edited else 0
    recall = (
        counts.of_those_flagged / counts.edits_touching_changed_names
        if counts.edits_touching_changed_names
        else 0
    )
    return {
        "repository": str(repo),
        "head": head,
        "commits": len(history),
        "documents": len(documents),
        **counts.__dict__,
        "precision": round(precision, 3),
        "recall": round(recall, 3),
        "flag_rate": round(counts.flagged / counts.versions, 3) if counts.versions else 0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = asyncio.run(measure(args.repo.resolve()))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
