#!/usr/bin/env bash
# Does what the Dockerfile does, without a Docker engine: a clean copy of exactly the files the
# build stage COPYs, `npm ci` and a production prune, the runtime stage's files only, a start
# with the image's ENV, then probes. Exits non-zero on any difference from what the image needs.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
server_pid=""
cleanup () { [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

build_stage=$(awk '/^FROM .* AS build/{on=1; next} /^FROM /{on=0} on' "$repo/Dockerfile")
runtime_stage=$(awk '/^FROM /{n++} n==2' "$repo/Dockerfile")

echo "== build stage: copy what the Dockerfile copies"
mkdir -p "$work/build"
while read -r _ line; do
  read -ra parts <<< "$line"
  for source in "${parts[@]:0:${#parts[@]}-1}"; do cp -R "$repo/$source" "$work/build/"; done
done < <(grep -E '^COPY ' <<< "$build_stage" | grep -v -- '--from')

echo "== build stage: npm ci && npm prune --omit=dev"
(cd "$work/build" && npm ci --no-audit --no-fund --loglevel=error && npm prune --omit=dev --no-audit --no-fund --loglevel=error)

echo "== runtime stage: package.json, node_modules, dist only"
mkdir -p "$work/app" "$work/data"
cp -R "$work/build/package.json" "$work/build/node_modules" "$work/build/dist" "$work/app/"
for dev in tap typescript tsx esbuild; do
  if [ -e "$work/app/node_modules/$dev" ]; then echo "development dependency $dev is in the image" >&2; exit 1; fi
done

echo "== start with the image's environment"
image_env=$(grep -E '^ENV ' <<< "$runtime_stage" | sed 's/^ENV //')
port=$((20000 + RANDOM % 20000))
metrics_port=$((port + 1))
(
  cd "$work/app"
  # The image's environment, with the volume and port moved into this sandbox and the
  # secret that production requires.
  env -i PATH="$PATH" $image_env PORT="$port" METRICS_PORT="$metrics_port" DATABASE_URL="sqlite:$work/data/meridian.db" \
    JWT_SECRET=image-smoke-secret-of-at-least-32-characters LOG_LEVEL=warn \
    node dist/cli.js serve
) &
server_pid=$!

# Up to 60 s: under a loaded CI machine a cold start of the pruned install is slow.
ready=""
for _ in $(seq 1 300); do
  if curl -fsS "http://127.0.0.1:$port/health/ready" > /dev/null 2>&1; then ready=1; break; fi
  kill -0 "$server_pid" 2>/dev/null || { echo "the server exited before it was ready" >&2; exit 1; }
  sleep 0.2
done
[ -n "$ready" ] || { echo "the server was not ready on port $port after 60 s" >&2; exit 1; }
echo "== probes"
curl -fsS "http://127.0.0.1:$port/health/ready"; echo
curl -fsS "http://127.0.0.1:$port/health/live"; echo
status=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port/api/auth/login" -d 'username=demo&password=meridian-demo')
[ "$status" = 403 ] || { echo "production must not create demo users (login answered $status)" >&2; exit 1; }
curl -fsS "http://127.0.0.1:$port/api/date/suninfo?timestamp=1700000000&latitude=51.48&longitude=0" > /dev/null
# Small documents render on the event loop, large ones (over 8 KiB) in worker threads: the
# pruned install must load the threads' module too.
# Each body is read whole before it is matched: in `curl | grep -q`, grep exits at its match and
# curl, still writing, fails the pipeline (curl: (23) Failed writing body).
small_page=$(curl -fsS -X POST -H 'content-type: application/json' -d '{"markdown":"# image"}' "http://127.0.0.1:$port/api/markdown/parse")
grep -qF 'id=\"user-content-image\">image</h1>' <<< "$small_page" || { echo "the Markdown route did not render a small document" >&2; exit 1; }
large=$(node -e 'process.stdout.write(JSON.stringify({ markdown: "# large\n\n" + "Some *prose*.\n\n".repeat(1000) }))')
large_page=$(curl -fsS -X POST -H 'content-type: application/json' -d "$large" "http://127.0.0.1:$port/api/markdown/parse")
grep -qF 'id=\"user-content-large\">large</h1>' <<< "$large_page" || { echo "the Markdown route did not render a large document in a thread" >&2; exit 1; }
metrics=$(curl -fsS "http://127.0.0.1:$metrics_port/metrics")
grep -q '^http_request_duration_seconds_count{method="GET",route="/api/date/suninfo"' <<< "$metrics" \
  || { echo "the metrics port did not count the requests" >&2; exit 1; }
status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/metrics")
[ "$status" = 404 ] || { echo "the API port must not serve /metrics (it answered $status)" >&2; exit 1; }
(cd "$work/app" && env -i PATH="$PATH" DATABASE_URL="sqlite:$work/data/meridian.db" node dist/cli.js migrate)

echo "== SIGTERM"
kill -TERM "$server_pid"
wait "$server_pid"
server_pid=""
echo "image smoke test passed"
