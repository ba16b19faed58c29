"""The `corpus` command (API.md, "Command line")."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, get_args
from uuid import UUID

from app.kit.types import SLUG_PATTERN
from app.rag.schemas import SearchMode

# Each command imports what it uses when it runs: `corpus keys revoke` starts without the MCP
# SDK, the web framework or the benchmarks.
if TYPE_CHECKING:
    from pydantic import ValidationError
    from tqdm import tqdm

    from app.auth.schemas import ApiKeyCreated
    from app.bench.ingest import IngestReport
    from app.config import Settings
    from app.db.engine import WriteConnection

logger = logging.getLogger("corpus")
T = TypeVar("T")


def _settings(**overrides: object) -> Settings:
    """Settings from the environment, with the command's flags on top."""
    from app.config import Settings

    return Settings(**{k: v for k, v in overrides.items() if v is not None})  # type: ignore[arg-type]


async def _check_embedding_model(settings: Settings, url: str) -> None:
    from app.db.engine import Database
    from app.system import service as system_service

    db = Database(url)
    try:
        await system_service.ensure_embedding_model(db, settings)
    finally:
        await db.dispose()


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from app.db import embedded, migrate
    from app.logs import configure_logging
    from app.main import create_app

    settings = _settings(host=args.host, port=args.port)
    configure_logging(settings.log_level, settings.log_format)
    # The embedded server stops when no other `corpus` process is attached to it.
    with embedded.attached(settings) as url:
        migrate.upgrade(settings, url)
        asyncio.run(_check_embedding_model(settings, url))
        app = create_app(settings)
        print(f"Corpus is serving on http://{settings.host}:{settings.port}", flush=True)
        uvicorn.run(
            app,
            host=settings.host,
            port=settings.port,
            log_config=None,  # ours (app.logs) carries the request id
            access_log=False,  # RequestIdMiddleware writes the access line, with the id
            proxy_headers=True,
            server_header=False,
        )
    return 0


def _migrate(_args: argparse.Namespace) -> int:
    from app.db import embedded, migrate
    from app.logs import configure_logging

    settings = _settings()
    configure_logging(settings.log_level, settings.log_format)
    with embedded.attached(settings) as url:
        migrate.upgrade(settings, url)
    print(f"database migrated to {migrate.head_revision(settings)}")
    return 0


def _ingest(args: argparse.Namespace) -> int:
    from app.documents.files import walk
    from app.logs import configure_logging

    settings = _settings()
    configure_logging("WARNING")
    if args.visibility == "private":
        print(
            "corpus: ingest writes documents owned by no one, so they must be `org`",
            file=sys.stderr,
        )
        return 2
    tags = [tag.strip().lower() for tag in (args.tags or "").split(",") if tag.strip()]
    files = list(walk([Path(p) for p in args.paths]))
    return _ingest_files(settings, files, args.workspace, tags)


def _ingest_files(settings: Settings, files: list[Path], workspace: str, tags: list[str]) -> int:
    """Ingest `files` into `workspace` (migrating first), print the report, and exit non-zero
    when a file failed."""
    from app.db import embedded, migrate

    with embedded.attached(settings) as url:
        migrate.upgrade(settings, url)
        report = asyncio.run(_ingest_async(settings, url, files, workspace, tags))
    counts = report.counts
    if report.created_workspace:
        print(
            f"corpus: created workspace {report.created_workspace!r} (license from policy; "
            "change it in the web app's Workspaces)",
            file=sys.stderr,
        )
    print(
        f"{len(files)} files: {counts['added']} added, {counts['updated']} updated, "
        f"{counts['unchanged']} unchanged, {counts['failed']} failed; "
        f"{report.chunks} chunks written"
    )
    for path, reason in report.failures:
        print(f"  failed {path}: {reason}", file=sys.stderr)
    return 1 if report.failures else 0


def _seed(_args: argparse.Namespace) -> int:
    from app.db.migrate import PROJECT_ROOT
    from app.documents.files import SAMPLE_TAGS, SAMPLE_WORKSPACE, sample_files
    from app.logs import configure_logging

    settings = _settings()
    configure_logging("WARNING")
    files = sample_files()
    if files is None:
        print(
            f"corpus: the sample corpus (README.md and docs/) is neither beside the app in "
            f"{PROJECT_ROOT} nor in the working folder {Path.cwd()}",
            file=sys.stderr,
        )
        return 1
    code = _ingest_files(settings, files, SAMPLE_WORKSPACE, SAMPLE_TAGS)
    print(f"the sample corpus is in workspace `{SAMPLE_WORKSPACE}`: search or ask it")
    return code


async def _ingest_async(
    settings: Settings, url: str, files: list[Path], workspace: str, tags: list[str]
) -> IngestReport:
    from tqdm import tqdm

    from app.bench.ingest import ingest_paths
    from app.db.engine import Database
    from app.documents.worker import Converter
    from app.rag.embeddings import make_embedder
    from app.system import service as system_service

    db = Database(url)
    embedder = make_embedder(settings)
    converter = Converter(settings)
    try:
        await system_service.ensure_embedding_model(db, settings)
        with tqdm(total=len(files), unit="file", file=sys.stderr, disable=not files) as bar:

            def advance(label: str) -> None:
                bar.set_postfix_str(label[:40], refresh=False)
                bar.update()

            return await ingest_paths(
                db,
                embedder,
                settings,
                converter,
                files,
                workspace=workspace,
                visibility="org",
                tags=tags,
                advance=advance,
            )
    finally:
        await converter.aclose()
        await embedder.aclose()
        await db.dispose()


@contextmanager
def _progress_bars() -> Iterator[Callable[[str, int, int], None]]:
    """A progress callback drawing one bar per stage on stderr (stdout is the report)."""
    from tqdm import tqdm

    bars: dict[str, tqdm[Any]] = {}

    def progress(stage: str, done: int, total: int) -> None:
        bar = bars.get(stage)
        if bar is None:
            bar = bars[stage] = tqdm(total=total, desc=stage, file=sys.stderr, leave=False)
        bar.update(done - bar.n)

    try:
        yield progress
    finally:
        for bar in bars.values():
            bar.close()


def _eval(args: argparse.Namespace) -> int:
    from app.bench.evaluation import MODES, evaluate
    from app.db import embedded
    from app.logs import configure_logging

    settings = _settings()
    configure_logging("WARNING")
    modes = MODES if args.mode == "all" else (args.mode,)
    with embedded.attached(settings), _progress_bars() as progress:
        report = asyncio.run(evaluate(settings, Path(args.data), modes, args.top_k, progress))
    if args.json:
        print(json.dumps(report))
    else:
        print(
            f"{report['dataset']}: {report['docs']} documents, {report['queries']} queries, "
            f"{report['provider']}:{report['model']}"
        )
        print(
            f"{'mode':<8} {'nDCG@10':>8} {'R@10':>8} {'R@100':>8} {'MRR@10':>8} "
            f"{'off-topic answered':>19}"
        )
        for mode, row in report["modes"].items():
            print(
                f"{mode:<8} {row['ndcg@10']:>8.4f} {row['recall@10']:>8.4f} "
                f"{row['recall@100']:>8.4f} {row['mrr@10']:>8.4f} "
                f"{row['off_topic_answered']:>12} of {report['off_topic']}"
            )
    return 0


def _bench_routing(args: argparse.Namespace) -> int:
    from app.bench.routing import bench_routing
    from app.db import embedded
    from app.logs import configure_logging

    settings = _settings()
    configure_logging("WARNING")
    size = args.sizes[0]  # 10,000 unless told
    with embedded.attached(settings), _progress_bars() as progress:
        report = asyncio.run(bench_routing(settings, progress, chunks_per_workspace=size))
    if args.json:
        print(json.dumps(report))
        return 0
    print(
        f"context block over {report['workspaces']} workspaces of "
        f"{report['chunks_per_workspace']:,} chunks, top {report['top_k']} each, "
        f"{report['queries']} queries (p50 / p95 ms):"
    )
    for key, label in (
        ("single_workspace_search_ms", "one workspace, one search"),
        ("context_cold_ms", "context block, cold"),
        ("context_cached_ms", "context block, from the cache"),
    ):
        row = report[key]
        print(f"  {label:<32} {row['p50']:>8} {row['p95']:>8}")
    print(f"  cold / single at p50: {report['cold_over_single_p50']}x")
    return 0


def _bench(args: argparse.Namespace) -> int:
    from app.bench import doors
    from app.bench.load import MODES, bench
    from app.db import embedded
    from app.logs import configure_logging

    if args.routing:
        return _bench_routing(args)
    settings = _settings()
    configure_logging("WARNING")

    async def run(progress: Callable[[str, int, int], None]) -> dict[str, Any]:
        collection = Path(args.data) if args.data else None
        report = await bench(settings, args.sizes, progress, keep=args.keep, collection=collection)
        # In the same run as the ingest's share of the model's rate: issue #33 sets bars on both.
        report["doors"] = await doors.measure(settings)
        return report

    with embedded.attached(settings), _progress_bars() as progress:
        report = asyncio.run(run(progress))
    if args.json:
        print(json.dumps(report))
        return 0
    ingest, with_model = report["ingest"], report["ingest_with_model"]
    print(
        f"ingest: {ingest['chunks_per_s']} chunks/s ({ingest['chunks']} chunks through the "
        "documents service, hash embedder)"
    )
    print(
        f"ingest: {with_model['chunks_per_s']} chunks/s ({with_model['chunks']} chunks of "
        f"{with_model['documents']} {with_model['text']} files through `corpus ingest`, "
        f"{with_model['provider']}); the model alone on the same chunks in batches of 16, "
        f"before, between and after the walk's parts: {with_model['model_alone_chunks_per_s']} "
        f"chunks/s (share {with_model['share_of_model_rate']}); in one call per part: "
        f"{with_model['model_alone_one_call_chunks_per_s']} chunks/s "
        f"(share {with_model['share_of_one_call_rate']})"
    )
    embedding = report["query_embedding"]
    print(
        f"query embedding alone, p50 / p95 ms: {embedding['one_client']['p50']} / "
        f"{embedding['one_client']['p95']} (1 client), {embedding['8_clients']['p50']} / "
        f"{embedding['8_clients']['p95']} (8 clients)"
    )
    print(
        f"{'chunks':>9} {'mode':<14} {'1 client p50/p95/p99 ms':>26} "
        f"{'8 clients p50/p95/p99 ms':>26}"
    )

    def line(where: str, label: str, one: dict[str, float], eight: dict[str, float]) -> None:
        print(
            f"{where:>9} {label:<14} "
            f"{one['p50']:>8} {one['p95']:>8} {one['p99']:>8} "
            f"{eight['p50']:>8} {eight['p95']:>8} {eight['p99']:>8}"
        )

    for size, row in report["sizes"].items():
        chunks = f"{int(size):,}"
        for mode in MODES:
            for suffix, label in (("", mode), ("_with_embedding", f"{mode}+emb")):
                if f"one_client{suffix}" in row[mode]:
                    line(
                        chunks,
                        label,
                        row[mode][f"one_client{suffix}"],
                        row[mode][f"8_clients{suffix}"],
                    )
        line(chunks, "bare pgvector", *row["bare_pgvector"]["short"].values())
        for mode in MODES:
            natural = row["natural"][mode]
            line(chunks, f"{mode} (nat.)", natural["one_client"], natural["8_clients"])
        line(chunks, "bare (nat.)", *row["bare_pgvector"]["natural"].values())
        kept = " (a kept corpus, loaded by an earlier run)" if row.get("reused") else ""
        print(f"{int(size):>9,} load: {row['load_seconds']} s{kept}")
        print(f"{int(size):>9,} p95 ratios, one client: {row['ratios']}")
        print(
            f"{int(size):>9,} HNSW recall@10 by ef_search: {row['hnsw_recall@10']} "
            f"(the product's: {row['product_ef_search']})"
        )
    if "collection" in report:
        row = report["collection"]
        name = row["name"]
        print(
            f"{name}: {row['documents']:,} documents, {row['chunks']:,} chunks, "
            f"{row['queries']} of its queries, hash vectors (loaded in {row['load_seconds']} s)"
        )
        for mode in MODES:
            line(name, mode, row[mode]["one_client"], row[mode]["8_clients"])
        line(name, "bare pgvector", *row["bare_pgvector"].values())
        print(f"{name:>9} p95 ratios, one client: {row['ratios']}")
    print(doors.summary(report["doors"]))
    print(f"query embedding: {report['provider_for_queries']}")
    return 0


def _reembed(_args: argparse.Namespace) -> int:
    from app.db import embedded, migrate
    from app.logs import configure_logging

    settings = _settings()
    configure_logging("WARNING")
    with embedded.attached(settings) as url:
        migrate.upgrade(settings, url)
        count = asyncio.run(_reembed_async(settings, url))
    _print_reembedded(settings, count)
    return 0


def _print_reembedded(settings: Settings, count: int) -> None:
    print(
        f"re-embedded {count} chunks with {settings.embeddings_provider}:"
        f"{settings.embeddings_model} ({settings.embeddings_dim}-d)"
    )


async def _reembed_async(settings: Settings, url: str) -> int:
    from tqdm import tqdm

    from app.db.engine import Database
    from app.rag.embeddings import make_embedder
    from app.rag.reembed import reembed

    db = Database(url)
    embedder = make_embedder(settings)
    try:
        with tqdm(unit="chunk", file=sys.stderr) as bar:

            def progress(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            return await reembed(db, embedder, progress)
    finally:
        await embedder.aclose()
        await db.dispose()


def _backup(args: argparse.Namespace) -> int:
    from app.db import embedded
    from app.logs import configure_logging
    from app.ops.backup import backup, check_destination

    settings = _settings()
    configure_logging("WARNING")
    path = Path(args.file)
    check_destination(path)
    with embedded.attached(settings) as url, _progress_bars() as progress:
        manifest = asyncio.run(backup(settings, url, path, progress))
    model = manifest.embedding
    print(
        f"backed up {manifest.workspaces} workspaces, {manifest.documents} documents and "
        f"{manifest.chunks} chunks (schema {manifest.revision}, {model.provider}:{model.model} "
        f"{model.dim}-d) to {path} ({path.stat().st_size:,} bytes)"
    )
    return 0


def _restore(args: argparse.Namespace) -> int:
    from app.db import embedded, migrate
    from app.logs import configure_logging
    from app.ops.backup import check_backup, check_target, load

    settings = _settings()
    configure_logging("WARNING")
    path = Path(args.file)
    plan = check_backup(settings, path, force=args.force, reembed=args.reembed)
    with embedded.attached(settings) as url:
        plan = asyncio.run(check_target(settings, url, plan, force=args.force))
        with _progress_bars() as progress:
            load(settings, url, path, plan, progress)
        # A backup of an older schema is migrated to this version's, as `corpus serve` would.
        migrate.upgrade(settings, url)
        reembedded = asyncio.run(_reembed_async(settings, url)) if plan.reembed else None
    manifest = plan.manifest
    replaced = f", replacing {plan.replaces} tables" if plan.replaces else ""
    print(
        f"restored {manifest.workspaces} workspaces, {manifest.documents} documents and "
        f"{manifest.chunks} chunks from {path} (taken {manifest.created_at:%Y-%m-%d %H:%M} UTC, "
        f"schema {manifest.revision}, now {migrate.head_revision(settings)}){replaced}"
    )
    if reembedded is not None:
        _print_reembedded(settings, reembedded)
    if plan.install_secret:
        print(f"installed the backup's secret key in {settings.data_dir}")
    elif plan.manifest.secret_key_included and settings.secret_key is not None:
        print(
            "note: the backup carries the generated secret key it was sealed with, but SECRET_KEY "
            "is set: secrets sealed with the old key (OAuth client secrets, remote workspace "
            "tokens) open only if SECRET_KEY is that key",
            file=sys.stderr,
        )
    return 0


def _print_invalid(exc: ValidationError) -> int:
    for err in exc.errors():
        print(f"corpus: {'.'.join(map(str, err['loc']))}: {err['msg']}", file=sys.stderr)
    return 2


def _in_transaction(work: Callable[[WriteConnection], Awaitable[T]]) -> T:
    """Run `work` in one transaction on the configured database (migrated first), as the
    operator: the account commands work before any account exists."""
    from app.db import embedded, migrate
    from app.db.engine import Database

    settings = _settings()

    async def run(url: str) -> T:
        db = Database(url)
        try:
            async with db.write() as conn:
                return await work(conn)
        finally:
            await db.dispose()

    with embedded.attached(settings) as url:
        migrate.upgrade(settings, url)
        return asyncio.run(run(url))


def _users_create(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from app.access.principal import LOCAL_ADMIN
    from app.logs import configure_logging
    from app.people import service as people_service
    from app.people.passwords import Hasher
    from app.people.schemas import UserCreate

    configure_logging("WARNING")
    try:
        data = UserCreate(
            email=args.email,
            role=args.role,
            kind="agent" if args.agent else "human",
            password=args.password,
            display_name=args.display_name or "",
        )
    except ValidationError as exc:
        return _print_invalid(exc)
    hasher = Hasher(workers=1)
    try:
        user, temporary = _in_transaction(
            lambda conn: people_service.create_user(conn, hasher, data, actor=LOCAL_ADMIN)
        )
    finally:
        hasher.close()
    print(f"created {user.kind} {user.email} ({user.role}), id {user.id}")
    if temporary is not None:
        print("temporary password (shown once; it must be changed at the first sign-in):")
        print(temporary)
    return 0


def _keys_create(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from app.access.principal import LOCAL_ADMIN
    from app.auth import service as auth_service
    from app.auth.schemas import ApiKeyCreate
    from app.errors import ValidationFailed
    from app.logs import configure_logging
    from app.people import service as people_service

    configure_logging("WARNING")

    async def create(conn: WriteConnection) -> ApiKeyCreated:
        owner = await people_service.find_by_email(conn, args.email)
        if owner is None:
            raise ValidationFailed(f"email: no account for {args.email}")
        data = ApiKeyCreate(
            user_id=owner.id, name=args.name, workspace=args.workspace, persona=args.persona
        )
        return await auth_service.create_key(conn, LOCAL_ADMIN, data)

    try:
        created = _in_transaction(create)
    except ValidationError as exc:
        return _print_invalid(exc)
    scope = f", workspace {created.workspace}" if created.workspace else ""
    print(f"created key {created.id} ({created.prefix}...) for {created.email}{scope}")
    print("the key, shown once:")
    print(created.key)  # the last line of stdout, so scripts can take it with `tail -n 1`
    return 0


def _keys_revoke(args: argparse.Namespace) -> int:
    from app.access.principal import LOCAL_ADMIN
    from app.auth import service as auth_service
    from app.logs import configure_logging

    configure_logging("WARNING")
    _in_transaction(lambda conn: auth_service.revoke_key(conn, LOCAL_ADMIN, args.id))
    print(f"revoked key {args.id}")
    return 0


def _sizes(value: str) -> list[int]:
    try:
        sizes = [int(part) for part in value.split(",") if part.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError("sizes are comma-separated integers") from exc
    if not sizes or min(sizes) < 100:
        raise argparse.ArgumentTypeError("each size must be at least 100 chunks")
    return sizes


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="corpus", description="Corpus: the knowledge base your agents and your team share."
    )
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="COMMAND")

    serve = verbs.add_parser("serve", help="migrate the database, then serve HTTP, MCP and the app")
    serve.add_argument("--host", help="address to listen on (default CORPUS_HOST, 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to listen on (default CORPUS_PORT, 8000)")
    serve.set_defaults(run=_serve)

    migrate_cmd = verbs.add_parser("migrate", help="migrate the database to the newest schema")
    migrate_cmd.set_defaults(run=_migrate)

    ingest = verbs.add_parser("ingest", help="add files and folders to the corpus")
    ingest.add_argument("paths", nargs="+", metavar="PATH", help="files or folders to walk")
    ingest.add_argument("--workspace", default="default", type=_slug, help="workspace slug")
    ingest.add_argument("--tags", help="comma-separated tags for every document")
    ingest.add_argument("--visibility", choices=["org", "private"], default="org")
    ingest.set_defaults(run=_ingest)

    seed = verbs.add_parser(
        "seed", help="load the sample corpus (the project's own docs) into workspace `sample`"
    )
    seed.set_defaults(run=_seed)

    evaluate_cmd = verbs.add_parser(
        "eval", help="measure retrieval quality on a BEIR-layout folder (throwaway database)"
    )
    evaluate_cmd.add_argument(
        "--data", required=True, help="folder with corpus.jsonl, queries.jsonl and qrels.tsv"
    )
    evaluate_cmd.add_argument("--mode", choices=[*get_args(SearchMode), "all"], default="all")
    evaluate_cmd.add_argument("--json", action="store_true", help="print one JSON object")
    evaluate_cmd.add_argument("--top-k", type=_positive, default=100)
    evaluate_cmd.set_defaults(run=_eval)

    bench_cmd = verbs.add_parser(
        "bench", help="measure ingest rate and search latency on synthetic corpora"
    )
    bench_cmd.add_argument("--json", action="store_true", help="print one JSON object")
    bench_cmd.add_argument(
        "--sizes",
        type=_sizes,
        default=[10_000, 100_000],
        help="chunk counts (default 10000,100000; with --routing, the first is per workspace)",
    )
    bench_cmd.add_argument(
        "--keep",
        action="store_true",
        help="keep each size's loaded corpus (database corpus_bench_kept_SIZE) and measure a "
        "kept one again instead of loading it",
    )
    bench_cmd.add_argument(
        "--data",
        help="a BEIR folder (corpus.jsonl, queries.jsonl, qrels.tsv): also measure search "
        "latency on its text with its queries, and the model's ingest rate on its documents",
    )
    bench_cmd.add_argument(
        "--routing",
        action="store_true",
        help="measure a persona's context block over five workspaces, cold and cached, "
        "against one single-workspace search",
    )
    bench_cmd.set_defaults(run=_bench)

    reembed_cmd = verbs.add_parser(
        "reembed", help="re-embed every chunk with the configured embedding model"
    )
    reembed_cmd.set_defaults(run=_reembed)

    backup_cmd = verbs.add_parser(
        "backup", help="write a consistent backup of the database (while it serves) to FILE"
    )
    backup_cmd.add_argument("file", metavar="FILE", help="the backup to write (must not exist)")
    backup_cmd.set_defaults(run=_backup)

    restore_cmd = verbs.add_parser(
        "restore", help="restore a backup into an empty data folder or database"
    )
    restore_cmd.add_argument("file", metavar="FILE", help="a file written by `corpus backup`")
    restore_cmd.add_argument(
        "--force", action="store_true", help="replace whatever the target database holds"
    )
    restore_cmd.add_argument(
        "--reembed",
        action="store_true",
        help="when the backup's embedding model is not the configured one, re-embed every chunk",
    )
    restore_cmd.set_defaults(run=_restore)

    users = verbs.add_parser("users", help="people and agent accounts")
    users_verbs = users.add_subparsers(dest="users_verb", required=True, metavar="COMMAND")
    users_create = users_verbs.add_parser("create", help="create an account with the given role")
    users_create.add_argument("--email", required=True)
    users_create.add_argument("--role", required=True, choices=["viewer", "editor", "admin"])
    users_create.add_argument("--agent", action="store_true", help="an agent (API keys only)")
    users_create.add_argument("--password", help="default: a temporary password, printed once")
    users_create.add_argument("--display-name")
    users_create.set_defaults(run=_users_create)

    keys = verbs.add_parser("keys", help="API keys for agents and scripts")
    keys_verbs = keys.add_subparsers(dest="keys_verb", required=True, metavar="COMMAND")
    keys_create = keys_verbs.add_parser(
        "create", help="mint a key for an account; prints the key alone as the last line"
    )
    keys_create.add_argument("--email", required=True, help="the account the key acts as")
    keys_create.add_argument("--name", required=True, help="what the key is for")
    keys_create.add_argument("--workspace", type=_slug, help="limit the key to one workspace")
    keys_create.add_argument("--persona", help="the persona the key's searches are routed by")
    keys_create.set_defaults(run=_keys_create)
    keys_revoke = keys_verbs.add_parser("revoke", help="revoke a key: its next request fails")
    keys_revoke.add_argument("--id", required=True, type=_uuid, help="the key's id")
    keys_revoke.set_defaults(run=_keys_revoke)
    _add_sources_parser(verbs)
    return parser


def _sources(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from app.logs import configure_logging
    from app.sources import commands
    from app.sources.schemas import SourceCreate

    settings = _settings()
    configure_logging("WARNING")
    if args.sources_verb == "add":
        secret = Path(args.secret_file).read_text().strip() if args.secret_file else None
        try:
            data = SourceCreate(
                kind=args.kind,
                location=args.location,
                branch=args.branch,
                include=args.include or [],
                exclude=args.exclude or [],
                secret=secret,
                schedule_minutes=args.schedule,
            )
        except ValidationError as exc:
            return _print_invalid(exc)
        return commands.add(settings, args.workspace, data)
    if args.sources_verb == "list":
        return commands.list_(settings, args.workspace)
    if args.sources_verb == "sync":
        return commands.sync(settings, args.id)
    return commands.remove(settings, args.id)


def _add_sources_parser(verbs: Any) -> None:
    sources = verbs.add_parser("sources", help="folders and git repositories kept in sync")
    sources_verbs = sources.add_subparsers(dest="sources_verb", required=True, metavar="VERB")
    add = sources_verbs.add_parser("add", help="add a folder or a git repository to a workspace")
    add.add_argument("location", help="a folder's path, or a repository's URL or path")
    add.add_argument("--kind", choices=["git", "folder"], default="git")
    add.add_argument("--workspace", default="default", type=_slug, help="workspace slug")
    add.add_argument("--branch", help="git: the branch to follow (default: the default one)")
    add.add_argument("--include", action="append", metavar="GLOB", help="paths to take")
    add.add_argument("--exclude", action="append", metavar="GLOB", help="paths to leave out")
    add.add_argument("--schedule", type=_positive, metavar="MINUTES", help="sync every N minutes")
    add.add_argument("--secret-file", help="a file holding the token or deploy key")
    listing = sources_verbs.add_parser("list", help="a workspace's sources")
    listing.add_argument("--workspace", default="default", type=_slug, help="workspace slug")
    sync = sources_verbs.add_parser("sync", help="sync a source now, with a progress bar")
    sync.add_argument("id", type=_uuid, help="the source's id")
    remove = sources_verbs.add_parser("remove", help="remove a source and its documents")
    remove.add_argument("id", type=_uuid, help="the source's id")
    sources.set_defaults(run=_sources)


def _slug(value: str) -> str:
    if not re.fullmatch(SLUG_PATTERN, value):
        raise argparse.ArgumentTypeError(f"{value!r} is not a workspace slug ({SLUG_PATTERN})")
    return value


def _uuid(value: str) -> UUID:
    try:
        return UUID(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{value!r} is not an id (a UUID)") from exc


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `corpus` console script."""
    from pydantic import ValidationError

    from app.errors import AppError, ValidationFailed

    args = _parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except ValidationError as exc:
        for err in exc.errors():
            name = str(err["loc"][0]) if err["loc"] else "settings"
            print(f"corpus: invalid setting {name}: {err['msg']}", file=sys.stderr)
        return 2
    except AppError as exc:
        print(f"corpus: {exc.message}", file=sys.stderr)
        return 2 if isinstance(exc, ValidationFailed) else 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
