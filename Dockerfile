FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY gateway ./gateway
RUN pip install --no-cache-dir .
COPY config.yaml ./
# tenants.yaml and spend.yaml; with no context.yaml there, the packaged one applies
# (gateway/data/context.yaml; copy it into policies/ to customize, see README).
COPY policies ./policies
# Mount a volume at /data and point the store there, or use GATEWAY_STORE_URL=redis://...
ENV GATEWAY_STORE_URL=sqlite:////data/gateway.db
VOLUME /data
EXPOSE 8080
USER nobody
CMD ["gateway", "serve", "--config", "config.yaml", "--host", "0.0.0.0", "--port", "8080"]
