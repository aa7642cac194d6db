# cn-run image: build with the Rust toolchain, run on a slim Debian with git and bash.
# docker build -t cn-run . && docker run --rm -v "$PWD:/workspace" --user "$(id -u):$(id -g)" -e OPENAI_API_KEY cn-run jobs/fix-lint.yaml
# (--user: the run folder .cn-run/ is written into the mounted checkout, as its owner.)

FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
# Dependencies first, in a layer of their own: it is rebuilt only when Cargo.toml or
# Cargo.lock change, not on every source edit. The targets Cargo.toml declares are stubs.
COPY Cargo.toml Cargo.lock ./
RUN mkdir -p src/bin tests benches \
    && echo 'fn main() {}' > src/main.rs \
    && echo 'fn main() {}' > src/bin/cn-run-call.rs \
    && touch src/lib.rs tests/integration.rs \
    && echo 'fn main() {}' > benches/main.rs \
    && cargo build --profile dist --locked --bin cn-run --bin cn-run-call \
    && rm -rf src tests benches
COPY src ./src
COPY benches ./benches
COPY tests ./tests
COPY examples ./examples
# COPY keeps the sources' times, which can be older than the stub build: touch them.
RUN touch src/main.rs src/lib.rs src/bin/cn-run-call.rs \
    && cargo build --profile dist --locked --bin cn-run --bin cn-run-call

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends bash bubblewrap ca-certificates git tzdata \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 --shell /bin/bash cnrun \
    && mkdir -p /workspace \
    && chown cnrun:cnrun /workspace \
    && git config --system --add safe.directory /workspace
COPY --from=build /src/target/dist/cn-run /src/target/dist/cn-run-call /usr/local/bin/
USER 10001:10001
WORKDIR /workspace
ENTRYPOINT ["cn-run"]
CMD ["--help"]
