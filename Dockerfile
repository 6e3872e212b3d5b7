# syntax=docker/dockerfile:1
# scripts/image-smoke.sh does what this file does (without a Docker engine) and test/image.test.ts
# runs it in CI: keep the two in step. It reads the COPY and ENV lines below.

# Node 24, the active LTS. On it the store loads better-sqlite3 13 (lib/store/better-sqlite3.ts).
FROM node:24-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 compiles from source when no prebuilt binary can be downloaded.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
    && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY app.ts server.ts cli.ts config.ts ./
COPY plugins ./plugins
COPY routes ./routes
COPY schemas ./schemas
COPY lib ./lib
# `prepare` builds dist/; pruning then leaves the production dependencies only.
RUN npm ci && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 METRICS_PORT=9100 DATABASE_URL=sqlite:/data/meridian.db
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000 9100
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/cli.js", "serve"]
