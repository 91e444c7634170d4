# The service image (k8s/ deploys it as glintwick:0.3.0, the version in pyproject.toml): the server's install only, no
# extras (no [tournament] plotting/ratings/progress bars, no [dev] tools such as grpcio-tools).
# `--target tournament` builds the tournament image instead (glintwick-tournament:0.3.0,
# for k8s/jobs/: the server's install plus the [tournament] extra).
# Build stage: a C compiler for the mypyc-compiled solver (setup.py), wheels for the rest.
FROM python:3.11-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md glintwick_cli.py ./
COPY engine engine
COPY services services
COPY clients clients
COPY glintwick glintwick
# `.` without extras: the runtime dependencies of pyproject.toml, what serving needs
RUN pip wheel --no-cache-dir --wheel-dir /wheels . \
    && pip wheel --no-cache-dir --wheel-dir /wheels-tournament '.[tournament]'

# The tournament image (not the default: the last stage is).
FROM python:3.11-slim AS tournament
COPY --from=build /wheels-tournament /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels \
    && useradd --uid 10001 --no-create-home glintwick
USER 10001
ENTRYPOINT ["glintwick"]
CMD ["tournament", "--help"]

# Run stage: the wheels only, no compiler.
FROM python:3.11-slim AS service
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels \
    && useradd --uid 10001 --no-create-home glintwick
USER 10001
EXPOSE 50051 8080
ENTRYPOINT ["glintwick"]
CMD ["serve", "--grpc", "0.0.0.0:50051", "--http", "0.0.0.0:8080"]
