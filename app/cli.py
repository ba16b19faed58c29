"""The `corpus` command (API.md, "Command line")."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Callable, Sequence

import uvicorn
from pydantic import ValidationError

from app.config import Settings
from app.db import embedded, migrate
from app.db.engine import Database
from app.errors import AppError
from app.logs import configure_logging
from app.main import create_app
from app.system import service as system_service

logger = logging.getLogger("corpus")


def _settings(**overrides: object) -> Settings:
    """Settings from the environment, with the command's flags on top."""
    return Settings(**{k: v for k, v in overrides.items() if v is not None})  # type: ignore[arg-type]


async def _check_embedding_model(settings: Settings, url: str) -> None:
    db = Database(url)
    try:
        await system_service.ensure_embedding_model(db, settings)
    finally:
        await db.dispose()


def _serve(args: argparse.Namespace) -> int:
    settings = _settings(host=args.host, port=args.port)
    configure_logging(settings.log_level)
    url = embedded.resolve_url(settings)
    try:
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
    finally:
        # Stops the embedded server when no other `corpus` process is attached to it.
        if not settings.database_url:
            embedded.release(settings.data_dir)
    return 0


def _migrate(_args: argparse.Namespace) -> int:
    settings = _settings()
    configure_logging(settings.log_level)
    url = embedded.resolve_url(settings)
    try:
        migrate.upgrade(settings, url)
    finally:
        if not settings.database_url:
            embedded.release(settings.data_dir)
    print(f"database migrated to {migrate.head_revision(settings)}")
    return 0


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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `corpus` console script."""
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
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
