#!/usr/bin/env bash
# The several-instances recipe of docs/operations.md, run for real: two production instances (`npm start` on
# ports 3001 and 3002) on a fresh database of the PostgreSQL server at 127.0.0.1:$1, nginx with
# deploy/nginx.conf in front (port 8080), then the cross-instance suite through the proxy
# (`npm run test:deploy`). Needs the production build (`npm run build`). Prints the nginx error log
# and both instances' logs when anything fails; stops everything it started on exit. The instances
# run on the `node` of PATH; with DEPLOY_NODE_VERSION set (`v24.21.0`), on that version or not at all.
#
#   bash .ci/deploy-test.sh <postgres port>
set -uo pipefail

PG_PORT=${1:?usage: deploy-test.sh <postgres port>}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
NGINX=${NGINX:-/usr/sbin/nginx}
DEPLOY_DIR=$(mktemp -d /tmp/ci-deploy.XXXXXX)
DB_NAME="deploy_$(date +%s)_$$"
ADMIN_URL="postgresql://postgres@127.0.0.1:$PG_PORT/postgres"
NGINX_STARTED=0
STATUS=1

log() { printf '[deploy] %s\n' "$*"; }

stop_group() {
  local pidfile=$1 pgid
  [ -f "$pidfile" ] || return 0
  pgid=$(cat "$pidfile")
  kill -TERM -- "-$pgid" 2>/dev/null || return 0
  for _ in $(seq 1 150); do kill -0 -- "-$pgid" 2>/dev/null || return 0; sleep 0.2; done
  kill -KILL -- "-$pgid" 2>/dev/null || true
}

finish() {
  if [ "$STATUS" -ne 0 ]; then
    for f in "$DEPLOY_DIR/logs/error.log" "$DEPLOY_DIR"/app-*.log; do
      [ -f "$f" ] || continue
      printf '\n----- %s (last 150 lines) -----\n' "$(basename "$f")"
      tail -n 150 "$f"
    done
  fi
  [ "$NGINX_STARTED" -eq 1 ] && "$NGINX" -p "$DEPLOY_DIR" -c "$ROOT/deploy/nginx.conf" -s quit 2>/dev/null
  stop_group "$DEPLOY_DIR/app-3001.pid"
  stop_group "$DEPLOY_DIR/app-3002.pid"
  psql "$ADMIN_URL" -qc "DROP DATABASE IF EXISTS \"$DB_NAME\" WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$DEPLOY_DIR"
  exit "$STATUS"
}
trap finish EXIT
trap 'exit 130' INT TERM

[ -f .next/BUILD_ID ] || { log "no production build: run npm run build first"; exit 1; }
[ -x "$NGINX" ] || { log "nginx not found at $NGINX (apt-get install nginx-light or nginx)"; exit 1; }
for port in 3001 3002 8080; do
  if (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    log "port $port is in use: stop what listens there"
    exit 1
  fi
done

psql "$ADMIN_URL" -qc "CREATE DATABASE \"$DB_NAME\"" || exit 1

# The environment of every instance (docs/operations.md, "Several instances"); the instances prepare the
# database themselves (migrations under an advisory lock, the demo data with AUTO_SEED=1).
export DATABASE_URL="postgresql://postgres@127.0.0.1:$PG_PORT/$DB_NAME"
export NEXTAUTH_URL=http://127.0.0.1:8080
NEXTAUTH_SECRET="$(openssl rand -base64 32)"
MCP_OVERRIDE_SECRET="$(openssl rand -base64 32)"
export NEXTAUTH_SECRET MCP_OVERRIDE_SECRET
export AUTO_SEED=1 AGENT_MODEL_PROVIDER=demo AGENT_RATE_LIMIT_PER_MINUTE=1000 SHUTDOWN_DRAIN_SECONDS=5 LOG_LEVEL=info
export DATABASE_POOL_MAX=10 NEXT_TELEMETRY_DISABLED=1
# The instances' diagnostics (GET /api/diagnostics) answer this token: they say which Node.js runs them.
DIAGNOSTICS_TOKEN="$(openssl rand -hex 24)"
export DIAGNOSTICS_TOKEN

chmod 755 "$DEPLOY_DIR" && mkdir -p "$DEPLOY_DIR/logs"
for port in 3001 3002; do
  # Each instance in its own process group, stopped as a process manager would (SIGTERM to all).
  PORT=$port setsid npm start >"$DEPLOY_DIR/app-$port.log" 2>&1 &
  echo $! >"$DEPLOY_DIR/app-$port.pid"
done
for port in 3001 3002; do
  ready=0
  for _ in $(seq 1 180); do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/api/ready")" = 200 ]; then ready=1; break; fi
    kill -0 "$(cat "$DEPLOY_DIR/app-$port.pid")" 2>/dev/null || break
    sleep 0.5
  done
  [ "$ready" -eq 1 ] || { log "instance on port $port did not become ready"; exit 1; }
  log "instance on port $port is ready"
  # DEPLOY_NODE_VERSION (CI: the Node.js LTS it deploys on): the instance must run on that version.
  running=$(curl -sf -H "authorization: Bearer $DIAGNOSTICS_TOKEN" "http://127.0.0.1:$port/api/diagnostics" |
    node -e 'let s="";process.stdin.on("data",(d)=>{s+=d}).on("end",()=>{console.log(JSON.parse(s).node)})') ||
    { log "instance on port $port did not answer its diagnostics"; exit 1; }
  log "instance on port $port runs on Node.js $running"
  if [ -n "${DEPLOY_NODE_VERSION:-}" ] && [ "$running" != "$DEPLOY_NODE_VERSION" ]; then
    log "instance on port $port runs on Node.js $running, not $DEPLOY_NODE_VERSION"
    exit 1
  fi
done

"$NGINX" -p "$DEPLOY_DIR" -c "$ROOT/deploy/nginx.conf" || exit 1
NGINX_STARTED=1
curl -sf http://127.0.0.1:8080/api/ready >/dev/null || { log "not ready through the proxy"; exit 1; }
log "nginx is proxying on http://127.0.0.1:8080"

DEPLOY_DIR="$DEPLOY_DIR" DEPLOY_PROXY_URL=http://127.0.0.1:8080 npm run test:deploy
STATUS=$?
exit "$STATUS"
