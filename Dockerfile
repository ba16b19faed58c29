# Stage 1: build the web app.
FROM node:20-bookworm-slim AS spa
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

# Stage 2: the Python process that serves API, MCP and the built app.
FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    CORPUS_HOST=0.0.0.0 \
    CORPUS_DATA_DIR=/var/lib/corpus \
    CORPUS_STATIC_DIR=/srv/corpus/frontend/dist
WORKDIR /srv/corpus
# git: sources kept in sync from git repositories (docs/adr/0035) run the distribution's git.
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends git openssh-client \
    && rm -rf /var/lib/apt/lists/*
# The image installs the project without its `export` extra: no torch (the local model ships as
# int8 ONNX and runs on onnxruntime, ADR 0010), so PyPI alone serves every pinned wheel.
# Dependencies first, so a code change does not reinstall them.
COPY pyproject.toml constraints.txt README.md ./
COPY app/__init__.py app/__init__.py
RUN pip install -c constraints.txt . && pip uninstall -y corpus
COPY app/ app/
COPY alembic/ alembic/
COPY alembic.ini ./
# The sample corpus of `corpus seed`.
COPY docs/ docs/
RUN pip install --no-deps -c constraints.txt .
COPY --from=spa /src/frontend/dist frontend/dist
# Non-root. The data folder holds the generated secret key and, without DATABASE_URL, the
# embedded database (compose.yaml sets DATABASE_URL, so it stays small).
RUN useradd --system --create-home --home-dir /var/lib/corpus corpus
USER corpus
EXPOSE 8000
# Migrations live in /srv/corpus/alembic; `corpus serve` runs them before it listens.
CMD ["corpus", "serve"]
