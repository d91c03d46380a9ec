# memrag API server. Build: docker build -t memrag .   (or: docker compose up --build)
#
# Two stages: TypeScript is compiled to dist/ with tsc in the first, and the image runs
# `node dist/main.js` over production dependencies only: nothing is transpiled at start.

# onnxruntime-node (via @huggingface/transformers) would otherwise download CUDA binaries at install
# time; the CPU build ships inside the package. (package.json's allowScripts denies that script too,
# but the npm of this image predates allowScripts.)
FROM node:20-bookworm-slim AS build
WORKDIR /app
ENV ONNXRUNTIME_NODE_INSTALL=skip
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The console's bundle is written beside the compiled server by the second half of the build.
COPY scripts/build-console.ts ./scripts/
RUN npm run build

FROM node:20-bookworm-slim
WORKDIR /app
ENV ONNXRUNTIME_NODE_INSTALL=skip

# Dependencies first, so source edits don't invalidate this layer. The npm scripts run the
# TypeScript sources through tsx, a dev dependency; here they run the compiled files instead, so
# `docker compose run --rm app npm run keys -- ...` and the compose file's `npm run worker` work as documented.
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --no-audit --no-fund \
 && npm cache clean --force \
 && npm pkg set scripts.start="node dist/main.js" scripts.worker="node dist/worker-main.js" scripts.keys="node dist/cli/keys.js" scripts.reembed="node dist/cli/reembed.js" \
    scripts.backup="node dist/cli/backup.js" scripts.restore="node dist/cli/restore.js"

COPY --from=build /app/dist ./dist
# Applied at start; found beside package.json from dist/ as from src/.
COPY migrations ./migrations
# The static embedding models (EMBEDDING_PROVIDER=static), found beside package.json like the migrations.
COPY models ./models

# glibc gives every thread (the embedding workers, libuv's pool) a malloc arena of its own, which
# keeps what it once held: two arenas took 91 MB off the embedded server after the load bench's
# mix (docs/benchmarks/load.md).
ENV NODE_ENV=production \
    MALLOC_ARENA_MAX=2 \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/app/data \
    EMBEDDING_CACHE_DIR=/app/data/models

# Run unprivileged; the data dir (model cache, local state) is the only writable path we need.
RUN mkdir -p /app/data/models && chown -R node:node /app/data
USER node

EXPOSE 3000
CMD ["node", "dist/main.js"]
