# memrag API server. Build: docker build -t memrag .   (or: docker compose up --build)
FROM node:20-bookworm-slim

WORKDIR /app

# onnxruntime-node (via @huggingface/transformers) would otherwise download CUDA binaries at install time;
# the CPU build ships inside the package.
ENV ONNXRUNTIME_NODE_INSTALL=skip

# Dependencies first, so source edits don't invalidate this layer.
# tsx (used by `npm start`) is a runtime dependency, so dev dependencies are left out.
COPY package.json package-lock.json .npmrc ./
RUN ONNXRUNTIME_NODE_INSTALL=skip npm ci --omit=dev --no-audit --no-fund \
 && npm cache clean --force

COPY . .

ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/app/data \
    EMBEDDING_CACHE_DIR=/app/data/models

# Run unprivileged; the data dir (model cache, local state) is the only writable path we need.
RUN mkdir -p /app/data/models && chown -R node:node /app/data
USER node

EXPOSE 3000
CMD ["npm", "start"]
