"""What can be checked of the container path on a machine without a docker daemon.

    PYTHONPATH=. .venv/bin/python scripts/check_container.py [--keep]

1. `compose.yaml` against the Compose Specification's JSON schema (the copy check-jsonschema
   vendors, pinned in constraints.txt).
2. The `Dockerfile`'s build steps, run here by a small interpreter of the instructions it uses
   (FROM, WORKDIR, ENV, COPY [--from], RUN, USER, EXPOSE, CMD): each stage in a folder of its
   own under a temporary root, its absolute paths mapped under that folder, the build context
   filtered by `.dockerignore`, every RUN line run by /bin/sh in the stage's WORKDIR with its ENV.
   The first stage's `node` is this machine's; the second stage's Python is a fresh virtual
   environment of this machine's Python standing in for python:3.11-slim.
3. The image's CMD (`corpus serve`) in its WORKDIR with its ENV, on 127.0.0.1, until `/readyz`
   answers; then `/` (the web app the first stage built) and `corpus seed` (the sample corpus,
   read from the image's working folder).

Not checked, because they need a container runtime: the base images themselves (Debian
bookworm's libraries, node:20, python:3.11-slim, pgvector/pgvector:pg18, caddy:2), `useradd`
and `USER corpus` (the steps run as this user; the line is reported skipped), the network
between the compose services, and Caddy's certificate. pip keeps its cache here (the image sets
PIP_NO_CACHE_DIR to keep the layer small; a cache does not change what is installed).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from tests.support import child_env, free_port

ROOT = Path(__file__).resolve().parents[1]
BUILD_TIMEOUT_S = 1800


@dataclass
class Stage:
    name: str
    root: Path
    workdir: str = "/"
    env: dict[str, str] = field(default_factory=dict)
    cmd: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def path(self, path: str) -> Path:
        """A path of the stage's file system, under its folder here."""
        absolute = path if path.startswith("/") else f"{self.workdir.rstrip('/')}/{path}"
        return self.root / absolute.lstrip("/")


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """The Dockerfile's instructions, continuation lines joined and comments dropped."""
    joined: list[str] = []
    current = ""
    for raw in dockerfile.read_text().splitlines():
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        joined.append(current + line)
        current = ""
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in joined]


def ignored(relative: Path, patterns: list[str]) -> bool:
    text = relative.as_posix()
    return any(
        fnmatch.fnmatch(text, pattern)
        or fnmatch.fnmatch(text, f"{pattern}/*")
        or any(fnmatch.fnmatch(part, pattern) for part in relative.parts)
        for pattern in patterns
    )


def copy_in(source: Path, target: Path, context: Path | None, patterns: list[str]) -> None:
    """COPY: a file to a file (or into a folder), a folder's contents into a folder."""
    if source.is_dir():
        for child in sorted(source.rglob("*")):
            if context is not None and ignored(child.relative_to(context), patterns):
                continue
            destination = target / child.relative_to(source)
            if child.is_dir():
                destination.mkdir(parents=True, exist_ok=True)
            else:
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(child, destination)
        return
    destination = target / source.name if target.is_dir() else target
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, destination)


def mapped_env(stage: Stage) -> dict[str, str]:
    """The stage's ENV with absolute paths mapped under its folder, over a minimal environment."""
    env = child_env(LANG="C.UTF-8")
    for key, value in stage.env.items():
        env[key] = str(stage.path(value)) if value.startswith("/") else value
    return env


def build(work: Path, log: list[str]) -> Stage:
    """Run the Dockerfile's steps; the last stage, built."""
    patterns = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    stages: dict[str, Stage] = {}
    stage: Stage | None = None
    for instruction, rest in instructions(ROOT / "Dockerfile"):
        if instruction == "FROM":
            parts = rest.split()
            name = parts[2] if len(parts) == 3 and parts[1].upper() == "AS" else str(len(stages))
            stage = Stage(name=name, root=work / f"stage-{name}")
            stage.root.mkdir(parents=True)
            if parts[0].startswith("python:"):
                # The base image's Python: a fresh virtual environment of this machine's.
                venv = stage.root / "python"
                subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
                stage.env["PATH"] = f"{venv / 'bin'}:{child_env().get('PATH', '/usr/bin:/bin')}"
                stage.env["VIRTUAL_ENV"] = str(venv)
            stages[name] = stage
            log.append(f"FROM {rest}")
            continue
        assert stage is not None, "an instruction before FROM"
        if instruction == "WORKDIR":
            stage.workdir = rest if rest.startswith("/") else f"{stage.workdir}/{rest}"
            stage.path(".").mkdir(parents=True, exist_ok=True)
        elif instruction == "ENV":
            for token in shlex.split(rest):
                key, _, value = token.partition("=")
                stage.env[key] = value
        elif instruction == "COPY":
            args = shlex.split(rest)
            origin = None
            if args[0].startswith("--from="):
                origin = stages[args[0].removeprefix("--from=")]
                args = args[1:]
            *sources, target = args
            destination = stage.path(target)
            if target.endswith("/") or len(sources) > 1:
                destination.mkdir(parents=True, exist_ok=True)
            for source in sources:
                if origin is not None:
                    copy_in(origin.path(source), destination, None, [])
                else:
                    copy_in(ROOT / source, destination, ROOT, patterns)
        elif instruction == "RUN":
            if rest.split()[0] in ("useradd", "adduser", "groupadd"):
                stage.skipped.append(f"RUN {rest}")
                log.append(f"skipped (no user is made here): RUN {rest}")
                continue
            env = mapped_env(stage)
            if "PATH" in stage.env:
                env["PATH"] = stage.env["PATH"]
            env.pop("PIP_NO_CACHE_DIR", None)
            started = time.monotonic()
            done = subprocess.run(
                ["/bin/sh", "-c", rest],
                cwd=stage.path("."),
                env=env,
                capture_output=True,
                text=True,
                timeout=BUILD_TIMEOUT_S,
                check=False,
            )
            log.append(f"RUN {rest}  ({time.monotonic() - started:.0f} s, exit {done.returncode})")
            if done.returncode != 0:
                raise SystemExit(
                    f"RUN {rest} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
                )
        elif instruction == "USER":
            stage.skipped.append(f"USER {rest}")
            log.append(f"skipped (the steps run as this user): USER {rest}")
        elif instruction == "CMD":
            stage.cmd = json.loads(rest)
        elif instruction == "EXPOSE":
            log.append(f"EXPOSE {rest}")
        else:
            raise SystemExit(f"{instruction}: an instruction this check does not interpret")
    assert stage is not None
    return stage


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as reply:  # loopback only
            return reply.status, reply.read().decode(errors="replace")
    except OSError as exc:
        return 0, str(exc)


def run_image(stage: Stage, log: list[str], embeddings: str) -> None:
    """The image's CMD, as the container would run it (on 127.0.0.1), then `corpus seed`."""
    env = mapped_env(stage)
    env["PATH"] = stage.env["PATH"]
    port = free_port()
    # The image listens on 0.0.0.0 for the container's network; here loopback only.
    env |= {"CORPUS_HOST": "127.0.0.1", "CORPUS_PORT": str(port)}
    env["EMBEDDINGS_PROVIDER"] = embeddings
    Path(env["CORPUS_DATA_DIR"]).mkdir(parents=True, exist_ok=True)
    output = stage.root / "serve.log"
    with output.open("w") as out:
        server = subprocess.Popen(
            stage.cmd, cwd=stage.path("."), env=env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 600
        while True:
            status, body = fetch(f"http://127.0.0.1:{port}/readyz")
            if status == 200:
                break
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"corpus serve did not get ready:\n{output.read_text()[-3000:]}")
            time.sleep(0.5)
        log.append(f"CMD {stage.cmd}: /readyz {status} {body.strip()[:200]}")
        status, body = fetch(f"http://127.0.0.1:{port}/")
        if status != 200 or '<div id="root"' not in body:
            raise SystemExit(f"GET / answered {status}: {body[:300]}")
        log.append("GET / 200: the web app the first stage built")
        corpus = stage.cmd[0]
        seeded = subprocess.run(
            [corpus, "seed"],
            cwd=stage.path("."),
            env=env,
            capture_output=True,
            text=True,
            timeout=1200,
            check=False,
        )
        if seeded.returncode != 0 or "workspace `sample`" not in seeded.stdout:
            raise SystemExit(f"corpus seed failed:\n{seeded.stdout}\n{seeded.stderr[-2000:]}")
        summary = re.search(r"\d+ files: [^\n]*", seeded.stdout)
        log.append(f"corpus seed: {summary[0] if summary else seeded.stdout.strip()}")
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()


def validate_compose(log: list[str]) -> None:
    checker = Path(sys.executable).parent / "check-jsonschema"
    done = subprocess.run(
        [str(checker), "--builtin-schema", "vendor.compose-spec", str(ROOT / "compose.yaml")],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"compose.yaml:\n{done.stdout}{done.stderr}")
    log.append("compose.yaml: valid against the Compose Specification's schema")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the build folder")
    parser.add_argument(
        "--embeddings",
        default="local",
        help="EMBEDDINGS_PROVIDER for the run (local, the image's default, checks that the "
        "packaged model loads)",
    )
    args = parser.parse_args()
    log: list[str] = []
    validate_compose(log)
    work = Path(tempfile.mkdtemp(prefix="corpus-image-", dir="/tmp"))
    try:
        stage = build(work, log)
        run_image(stage, log, args.embeddings)
    finally:
        for line in log:
            print(line)
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
