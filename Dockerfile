# olmq: one image for the watcher and every function (`olmq watcher`, `olmq run <function>`).
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
# Sources, tests and crds/ (.dockerignore keeps node_modules, dist and local state out).
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:20-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/crds ./crds
# The registry's .proto files, which dist/shared/registry loads at runtime (tsc does not copy them).
COPY --from=build /app/shared/registry/proto ./shared/registry/proto
# The example catalog `olmq up` serves by default (catalogs/LICENSE-NOTICE.md).
COPY --from=build /app/catalogs ./catalogs
# `olmq` on PATH, as the Kubernetes manifests call it.
RUN chmod +x dist/cli/main.js && ln -s /app/dist/cli/main.js /usr/local/bin/olmq
# The node image's unprivileged user, by number so runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["--help"]
