# grantry in a container: built with the Rust toolchain, run on a slim Debian with only the CA
# certificates it needs to reach providers over TLS.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked && cp target/release/grantry /grantry

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* && useradd --system --home /var/lib/grantry grantry \
    && mkdir -p /var/lib/grantry && chown grantry /var/lib/grantry
COPY --from=build /grantry /usr/local/bin/grantry
USER grantry
WORKDIR /var/lib/grantry
ENTRYPOINT ["grantry"]
