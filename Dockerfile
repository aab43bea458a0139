# The gateway's container image (docs/deploying.md#the-container-image-and-the-compose-file).
# Stage 1 installs everything and builds the start-up bundle and the web UI (`npm ci` runs the
# `prepare` script); stage 2 keeps the production dependencies only; the image runs Node 24 as
# the unprivileged `node` user, with a health check on GET /health.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund

FROM node:24-bookworm-slim AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` builds the bundle, which stage 1 did; the Node binary the
# optional dependencies bring is the base image's already
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund

FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    NODE_COMPILE_CACHE=/tmp/node-compile-cache \
    GATEWAY_BIND_ADDRESS=0.0.0.0:3000
WORKDIR /app
COPY --from=production-dependencies /app/node_modules ./node_modules
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/bin ./bin
COPY --from=build /app/src ./src
COPY --from=build /app/layers ./layers
COPY --from=build /app/migrations ./migrations
COPY --from=build /app/examples ./examples
COPY --from=build /app/dist ./dist
# the bundle must be newer than the sources and the installed dependencies, or bin/start.mjs
# runs the sources (it cannot rebuild it without esbuild)
RUN touch dist/bin/*.mjs && mkdir -p /var/lib/gateway && chown node:node /var/lib/gateway
USER node
EXPOSE 3000
HEALTHCHECK --interval=5s --timeout=3s --start-period=20s --retries=2 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:3000/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "bin/start.mjs"]
CMD ["--config-file", "/config/config.toml"]
