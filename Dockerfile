# mock-upstream (and loadgen) as small, non-root images.
#
#   docker build -t gatebench/mock-upstream .                 # the mock (the last stage)
#   docker build -t gatebench/loadgen --target loadgen .      # the load generator
#   docker run --rm -p 8080:8080 -e MOCK_TTFT=200ms -e MOCK_ITL=20ms gatebench/mock-upstream
#
# The mock is configured entirely by MOCK_* variables (every flag has one; see the README) and
# listens on 0.0.0.0:8080 inside the container. Raise the open-file limit for many streams
# (docker run --ulimit nofile=65536:65536, or `ulimits` in compose): each stream is a socket.

FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p mock-upstream -p loadgen \
 && strip target/release/mock-upstream target/release/loadgen \
 && cp target/release/mock-upstream target/release/loadgen /usr/local/bin/

# glibc and libgcc, no shell, no package manager; runs as uid 65532.
FROM gcr.io/distroless/cc-debian12:nonroot AS loadgen
COPY --from=build /usr/local/bin/loadgen /usr/local/bin/loadgen
WORKDIR /home/nonroot
USER nonroot
ENTRYPOINT ["/usr/local/bin/loadgen"]

FROM gcr.io/distroless/cc-debian12:nonroot AS mock
COPY --from=build /usr/local/bin/mock-upstream /usr/local/bin/mock-upstream
# Inside a container the port must be reachable from the other containers.
ENV MOCK_LISTEN=0.0.0.0:8080
EXPOSE 8080
WORKDIR /home/nonroot
USER nonroot
# The image has no curl: the binary asks its own /health, found from the same MOCK_* settings.
HEALTHCHECK --interval=5s --timeout=3s --start-period=2s --retries=3 \
  CMD ["/usr/local/bin/mock-upstream", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/mock-upstream"]
