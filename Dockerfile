# syntax=docker/dockerfile:1

# Build stage: compiles TypeScript, then drops the dev dependencies. Node.js 24 LTS, its newest release
# as CI runs it. No compiler: the SQLite binding (better-sqlite3 13, Node-API) ships its binaries for
# linux-x64 and linux-arm64, glibc and musl, inside its package.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ormconfig.ts ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

# Runtime stage: production dependencies and compiled code only, run as the unprivileged node user.
FROM node:24-bookworm-slim AS runtime
# The source commit, for the build-info metric: docker build --build-arg SERVICE_COMMIT=$(git rev-parse HEAD)
ARG SERVICE_COMMIT=unknown
ENV NODE_ENV=production \
    PORT=3000 \
    SERVICE_COMMIT=$SERVICE_COMMIT
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./package.json
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
# The embedded database's default location, for runs without DATABASE_URL.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
# The API. With HEALTH_PORT set (say 9000: publish it to the orchestrator and the gateway only), the
# probes are served there too, outside the connection caps, and the health check asks there.
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=3s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.HEALTH_PORT || process.env.PORT || 3000) + '/health/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Schema changes on MySQL are a separate step: `docker run … node node_modules/typeorm/cli.js
# migration:run -d dist/ormconfig.js`, or MIGRATIONS_RUN=true on one instance.
# The live heap is about 32 MB; the cap keeps V8 from growing the old space far past it under load.
CMD ["node", "--max-old-space-size=256", "--max-semi-space-size=8", "--no-maglev", "dist/src/main.js"]
