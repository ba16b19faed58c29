#!/usr/bin/env bash
# Install Corpus on a fresh Debian or Ubuntu server behind Caddy, or upgrade it in place.
#
#   sudo ./deploy.sh corpus.example.com
#
# A second run upgrades in place: new code, `corpus migrate`, restart; settings and the secret
# key in /etc/corpus/corpus.env are kept. docs/DEPLOYMENT.md has the whole story.
#
# Settings (environment), defaults for a public server:
#   CORPUS_PORT=8000        the app's port on 127.0.0.1 (only Caddy talks to it)
#   HTTPS_PORT=443          Caddy's HTTPS port;  HTTP_PORT=80: its redirect to HTTPS
#   TLS=acme                acme: a public certificate (Let's Encrypt / ZeroSSL; the domain must
#                           resolve here and ports 80/443 be reachable); internal: Caddy's own CA
#                           (a local name, a private network)
#   BIND=                   the addresses Caddy listens on (default: all), e.g. 127.0.0.1
#   SOURCE=                 the checkout to install (default: this script's folder)
#   WAIT_S=180              how long to wait for /readyz through Caddy
set -euo pipefail

DOMAIN="${1:-}"
CORPUS_PORT="${CORPUS_PORT:-8000}"
HTTPS_PORT="${HTTPS_PORT:-443}"
HTTP_PORT="${HTTP_PORT:-80}"
TLS="${TLS:-acme}"
BIND="${BIND:-}"
SOURCE="${SOURCE:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}"
WAIT_S="${WAIT_S:-180}"

PREFIX=/opt/corpus
# The distribution's Python, which the service's user can run (not a pyenv or a user's own).
PYTHON=/usr/bin/python3
DATA=/var/lib/corpus
CONF=/etc/corpus
ENV_FILE="$CONF/corpus.env"
CADDYFILE=/etc/caddy/Caddyfile
CADDY_ROOT_CA=/var/lib/caddy/.local/share/caddy/pki/authorities/local/root.crt
LOG=/var/log/corpus
# The inner shell of a corpus command: loads the settings file ($0), then runs the command ($@).
# shellcheck disable=SC2016  # expanded by that inner shell, not this one
WITH_SETTINGS='set -a; . "$0"; set +a; exec "$@"'

say() { printf '==> %s\n' "$*"; }
die() { printf 'deploy.sh: %s\n' "$*" >&2; exit 1; }

[[ -n "$DOMAIN" ]] || die "usage: sudo ./deploy.sh DOMAIN (e.g. corpus.example.com)"
[[ "$DOMAIN" =~ ^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$ ]] || die "$DOMAIN is not a host name"
[[ "$TLS" == acme || "$TLS" == internal ]] || die "TLS is acme or internal, not $TLS"
for port in "$CORPUS_PORT" "$HTTPS_PORT" "$HTTP_PORT"; do
  if ! [[ "$port" =~ ^[0-9]+$ ]] || ((port < 1 || port > 65535)); then die "$port is not a port"; fi
done
[[ "$(id -u)" == 0 ]] || die "run as root (sudo ./deploy.sh $DOMAIN)"
command -v apt-get >/dev/null || die "this script installs with apt-get (Debian or Ubuntu)"
[[ -f "$SOURCE/pyproject.toml" && -d "$SOURCE/app" ]] || die "$SOURCE is not a Corpus checkout"

# systemd where it runs; start-stop-daemon (dpkg's) where it does not: a container, a chroot.
if [[ -d /run/systemd/system ]]; then SUPERVISOR=systemd; else SUPERVISOR=plain; fi

public_url() {
  if [[ "$HTTPS_PORT" == 443 ]]; then echo "https://$DOMAIN"; else echo "https://$DOMAIN:$HTTPS_PORT"; fi
}

install_packages() {
  say "installing packages: python3, python3-venv, caddy, curl, git"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq python3 python3-venv caddy curl ca-certificates git openssh-client >/dev/null
  "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || die "Corpus needs Python 3.11 or newer; this system has $("$PYTHON" --version)"
}

create_user() {
  if ! id corpus >/dev/null 2>&1; then
    say "creating the system user corpus (data in $DATA)"
    useradd --system --home-dir "$DATA" --shell /usr/sbin/nologin corpus
  fi
  install -d -o corpus -g corpus -m 0750 "$DATA"
  install -d -o root -g corpus -m 0750 "$CONF"
  install -d -o corpus -g corpus -m 0750 "$LOG"
  install -d -m 0755 "$PREFIX"
}

# KEY=VALUE in the settings file: replaced where it is, else appended.
set_setting() {
  local key="$1" value="$2"
  if grep -q "^$key=" "$ENV_FILE"; then
    sed -i "s|^$key=.*|$key=$value|" "$ENV_FILE"
  else
    printf '%s=%s\n' "$key" "$value" >>"$ENV_FILE"
  fi
}

write_settings() {
  if [[ ! -f "$ENV_FILE" ]]; then
    say "writing $ENV_FILE with a new SECRET_KEY"
    install -o root -g corpus -m 0640 /dev/null "$ENV_FILE"
    {
      echo "# Corpus settings (README, \"Configuration\"). deploy.sh keeps this file on upgrades"
      echo "# and rewrites only the lines it manages: CORPUS_HOST, CORPUS_PORT, CORPUS_DATA_DIR,"
      echo "# CORPUS_STATIC_DIR, CORPUS_PUBLIC_URL, CORPUS_ALLOWED_HOSTS."
      echo "SECRET_KEY=$("$PYTHON" -c 'import secrets; print(secrets.token_urlsafe(48))')"
      echo "CORPUS_LOG_FORMAT=json"
      echo "# DATABASE_URL=postgresql://corpus:PASSWORD@db.internal:5432/corpus"
      echo "# CORPUS_METRICS_TOKEN="
    } >>"$ENV_FILE"
  fi
  set_setting CORPUS_HOST 127.0.0.1
  set_setting CORPUS_PORT "$CORPUS_PORT"
  set_setting CORPUS_DATA_DIR "$DATA"
  set_setting CORPUS_STATIC_DIR "$PREFIX/src/frontend/dist"
  set_setting CORPUS_PUBLIC_URL "$(public_url)"
  set_setting CORPUS_ALLOWED_HOSTS "$DOMAIN"
}

# The checkout's tracked files (with their working-tree contents) and its built web app.
copy_source() {
  local into="$1"
  rm -rf "$into"
  install -d -m 0755 "$into"
  if git -C "$SOURCE" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$SOURCE" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$into"
  else
    tar -C "$SOURCE" --exclude=.venv --exclude=node_modules --exclude=var -cf - . | tar -xf - -C "$into"
  fi
  if [[ -f "$SOURCE/frontend/dist/index.html" ]]; then
    cp -a "$SOURCE/frontend/dist" "$into/frontend/dist"
  fi
}

build_web_app() {
  local src="$1"
  [[ -f "$src/frontend/dist/index.html" ]] && return 0
  command -v npm >/dev/null \
    || die "the web app is not built: run \`make build\` in $SOURCE first, or install Node.js 20.19+"
  say "building the web app (npm ci, npm run build)"
  (cd "$src/frontend" && npm ci --no-audit --no-fund --loglevel=error && npm run build) >/dev/null
  rm -rf "$src/frontend/node_modules"
}

install_app() {
  say "installing Corpus from $SOURCE into $PREFIX"
  copy_source "$PREFIX/src.new"
  build_web_app "$PREFIX/src.new"
  if [[ "$(readlink -f "$PREFIX/venv/bin/python")" != "$(readlink -f "$PYTHON")" ]]; then
    "$PYTHON" -m venv --clear "$PREFIX/venv"
  fi
  # uv, pinned in constraints.txt like everything else, installs the pinned set.
  "$PREFIX/venv/bin/python" -m pip install --quiet -c "$PREFIX/src.new/constraints.txt" uv
  if ! "$PREFIX/venv/bin/uv" pip install --quiet --python "$PREFIX/venv/bin/python" \
    -c "$PREFIX/src.new/constraints.txt" "$PREFIX/src.new" 2>"$PREFIX/pinned-install.log"; then
    # The tested set may need a newer point release than the distribution's (Debian 12 has
    # 3.11.2; a pin may need 3.11.5): the newest versions this Python takes, within
    # pyproject.toml's bounds, rather than none.
    say "the pinned set does not install on $("$PYTHON" --version) ($PREFIX/pinned-install.log" \
      "says why); resolving for it instead"
    "$PREFIX/venv/bin/uv" pip install --quiet --python "$PREFIX/venv/bin/python" "$PREFIX/src.new"
  fi
  rm -rf "$PREFIX/src.old"
  if [[ -d "$PREFIX/src" ]]; then mv "$PREFIX/src" "$PREFIX/src.old"; fi
  mv "$PREFIX/src.new" "$PREFIX/src"
  rm -rf "$PREFIX/src.old"
}

# Run a corpus command as the service's user, with its settings.
as_corpus() {
  (cd "$PREFIX/src" && setpriv --reuid=corpus --regid=corpus --init-groups \
    env -i PATH=/usr/bin:/bin HOME="$DATA" CORPUS_LOG_LEVEL=WARNING bash -c "$WITH_SETTINGS" \
    "$ENV_FILE" "$PREFIX/venv/bin/corpus" "$@")
}

write_caddyfile() {
  say "writing $CADDYFILE ($TLS TLS for $DOMAIN on port $HTTPS_PORT)"
  {
    echo "# Written by Corpus's deploy.sh: Caddy terminates TLS for $DOMAIN and proxies to Corpus."
    echo "{"
    echo "	http_port $HTTP_PORT"
    echo "	https_port $HTTPS_PORT"
    if [[ -n "$BIND" ]]; then echo "	default_bind $BIND"; fi
    echo "}"
    echo ""
    echo "$DOMAIN {"
    if [[ "$TLS" == internal ]]; then echo "	tls internal"; fi
    echo "	# Server-sent events (POST /api/ask) are flushed as they come."
    echo "	reverse_proxy 127.0.0.1:$CORPUS_PORT {"
    echo "		flush_interval -1"
    echo "	}"
    echo "}"
  } >"$CADDYFILE.new"
  caddy validate --config "$CADDYFILE.new" --adapter caddyfile >/dev/null 2>&1 \
    || { caddy validate --config "$CADDYFILE.new" --adapter caddyfile; die "the Caddyfile is invalid"; }
  mv "$CADDYFILE.new" "$CADDYFILE"
}

install_unit() {
  install -m 0644 "$PREFIX/src/deploy/corpus.service" /etc/systemd/system/corpus.service
  systemctl daemon-reload
}

stop_corpus() {
  if [[ "$SUPERVISOR" == systemd ]]; then
    systemctl stop corpus 2>/dev/null || true
  else
    start-stop-daemon --stop --quiet --retry=TERM/60/KILL/5 --pidfile /run/corpus.pid \
      --remove-pidfile 2>/dev/null || true
  fi
}

start_corpus() {
  if [[ "$SUPERVISOR" == systemd ]]; then
    install_unit
    systemctl enable --quiet corpus
    systemctl restart corpus
  else
    start-stop-daemon --start --quiet --background --make-pidfile --pidfile /run/corpus.pid \
      --chuid corpus:corpus --chdir "$PREFIX/src" --output "$LOG/corpus.log" \
      --exec /usr/bin/env -- -i PATH=/usr/bin:/bin HOME="$DATA" \
      bash -c "$WITH_SETTINGS" "$ENV_FILE" "$PREFIX/venv/bin/corpus" serve
  fi
}

start_caddy() {
  if [[ "$SUPERVISOR" == systemd ]]; then
    systemctl enable --quiet caddy
    systemctl reload-or-restart caddy
  elif start-stop-daemon --status --pidfile /run/corpus-caddy.pid; then
    caddy reload --config "$CADDYFILE" --adapter caddyfile
  else
    start-stop-daemon --start --quiet --background --make-pidfile --pidfile /run/corpus-caddy.pid \
      --chuid caddy:caddy --chdir /var/lib/caddy --output "$LOG/caddy.log" \
      --exec /usr/bin/env -- HOME=/var/lib/caddy XDG_DATA_HOME=/var/lib/caddy/.local/share \
      /usr/bin/caddy run --environ --config "$CADDYFILE" --adapter caddyfile
  fi
}

wait_until_ready() {
  local url address="${BIND%% *}" deadline=$((SECONDS + WAIT_S)) tls=()
  url="$(public_url)/readyz"
  say "waiting for $url through Caddy (at most $WAIT_S s)"
  if [[ "$TLS" == internal ]]; then
    # Caddy's own CA: trusted for this check only (clients must be told to trust it).
    tls=(--cacert "$CADDY_ROOT_CA")
  fi
  while ((SECONDS < deadline)); do
    if [[ "$TLS" == acme || -f "$CADDY_ROOT_CA" ]] \
      && curl --silent --fail --max-time 5 "${tls[@]}" \
        --resolve "$DOMAIN:$HTTPS_PORT:${address:-127.0.0.1}" "$url" >/dev/null; then
      return 0
    fi
    sleep 1
  done
  if [[ "$SUPERVISOR" == systemd ]]; then
    die "$url did not answer within $WAIT_S s; see journalctl -u corpus -u caddy"
  fi
  die "$url did not answer within $WAIT_S s; see $LOG/corpus.log and $LOG/caddy.log"
}

main() {
  local first_run=yes
  [[ -d "$PREFIX/src" ]] && first_run=no
  install_packages
  create_user
  write_settings
  stop_corpus
  install_app
  say "migrating the database (corpus migrate)"
  as_corpus migrate
  write_caddyfile
  start_corpus
  start_caddy
  wait_until_ready
  echo
  if [[ "$first_run" == yes ]]; then
    echo "Corpus is serving at $(public_url)"
    echo "First run: open $(public_url)/setup to create the first (admin) account, or:"
    echo "  sudo -u corpus sh -c 'set -a; . $ENV_FILE; cd $PREFIX/src; $PREFIX/venv/bin/corpus users create --email you@example.com --role admin'"
  else
    echo "Corpus is upgraded and serving at $(public_url)"
  fi
  if [[ "$TLS" == internal ]]; then
    echo "TLS comes from Caddy's own CA: trust $CADDY_ROOT_CA on the clients."
  fi
}

main
