# The service image (k8s/ deploys it as glintwick:latest).
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md glintwick_cli.py ./
COPY engine engine
COPY services services
COPY clients clients
COPY glintwick glintwick
RUN pip install --no-cache-dir . && useradd --uid 10001 --no-create-home glintwick
USER 10001
EXPOSE 50051 8080
ENTRYPOINT ["glintwick"]
CMD ["serve", "--grpc", "0.0.0.0:50051", "--http", "0.0.0.0:8080"]
