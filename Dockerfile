# The gateway's image. Build from the repository root: docker build -t context-gateway .
# Runs as uid 10001 (numeric, so Kubernetes' runAsNonRoot can verify it), with its
# config and all it writes under /data. See deploy/README.md.

# The gateway as a wheel, built apart so no source tree or build leftovers reach the image.
FROM python:3.11-slim-bookworm AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY gateway ./gateway
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# Dependencies first, from the lock (every runtime package pinned with ==), so a code
# change does not reinstall them; then the gateway's wheel with nothing more.
COPY requirements.lock /tmp/requirements.lock
RUN pip install --no-cache-dir --requirement /tmp/requirements.lock \
    && rm /tmp/requirements.lock
COPY --from=build /wheels /tmp/wheels
RUN pip install --no-cache-dir --no-deps /tmp/wheels/*.whl && rm -rf /tmp/wheels

# /data holds the config (the gateway writes its pending-bookings spill file beside it),
# the policies, the embedded SQLite store and the spill file. The directory belongs to
# the gateway's user so it can create those files; the config and policies stay
# root-owned (read-only to the gateway). Mount your own over them (deploy/README.md).
# Everything here happens before VOLUME: later changes to a volume's path are discarded.
RUN groupadd --system --gid 10001 gateway \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /data \
       --shell /usr/sbin/nologin gateway \
    && mkdir -p /data \
    && chown 10001:10001 /data
COPY deploy/config/config.yaml /data/config.yaml
COPY deploy/config/policies /data/policies
VOLUME ["/data"]

# No simulator by default: /data/config.yaml names no upstream, so the gateway refuses to
# start until GATEWAY_UPSTREAM_URL is set. One container alone uses SQLite in /data.
USER 10001:10001
WORKDIR /data
EXPOSE 8080

# No curl in slim images: the interpreter asks /livez (200 while the process serves).
# Liveness, not readiness: /readyz answers 503 while the store is down, which should take
# a replica out of a load balancer, not mark the container for a restart.
# urlopen raises on a non-2xx answer.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request as u; u.urlopen('http://127.0.0.1:8080/livez', timeout=2)"]

CMD ["gateway", "serve", "--config", "/data/config.yaml", "--host", "0.0.0.0", "--port", "8080"]
