# cn-run image: build with the Rust toolchain, run on a slim Debian with git and bash.
# docker build -t cn-run . && docker run --rm -v "$PWD:/workspace" -e OPENAI_API_KEY cn-run jobs/fix-lint.yaml

FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY benches ./benches
COPY tests ./tests
COPY examples ./examples
RUN cargo build --profile dist --locked --bin cn-run

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends bash bubblewrap ca-certificates git tzdata \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 --shell /bin/bash cnrun \
    && mkdir -p /workspace \
    && chown cnrun:cnrun /workspace \
    && git config --system --add safe.directory /workspace
COPY --from=build /src/target/dist/cn-run /usr/local/bin/cn-run
USER 10001:10001
WORKDIR /workspace
ENTRYPOINT ["cn-run"]
CMD ["--help"]
