# Sounding's image: `docker build -t sounding .`, then
#   docker run -p 3000:3000 -p 4317:4317 -v sounding-data:/data sounding
# (docs/operating.md, "Packaging: Docker, systemd, Kubernetes"). Two stages: wheels are built
# with the build tools, the runtime stage installs them into a slim image without.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
# Every dependency at the version and hash of the lock `make run` installs from
# (requirements/run.txt), as wheels; then Sounding's own, built by the locked setuptools.
COPY requirements/run.txt ./requirements/
RUN pip wheel --no-cache-dir --require-hashes --wheel-dir /wheels -r requirements/run.txt \
    && pip install --no-cache-dir --require-hashes -r requirements/run.txt
COPY pyproject.toml README.md ./
COPY sounding ./sounding
COPY model ./model
COPY runtime ./runtime
COPY extensions ./extensions
COPY receiver ./receiver
COPY processors ./processors
COPY exporters ./exporters
COPY storage ./storage
COPY dashboard ./dashboard
COPY proto ./proto
RUN pip wheel --no-cache-dir --no-deps --no-build-isolation --wheel-dir /wheels .

FROM ${PYTHON_IMAGE} AS runtime
# A fixed, unprivileged id: the volume's files belong to it on every host.
RUN groupadd --system --gid 10001 sounding \
    && useradd --system --uid 10001 --gid sounding --home-dir /data --no-create-home \
       --shell /usr/sbin/nologin sounding \
    && mkdir /data && chown sounding:sounding /data
COPY --from=build /wheels /wheels
# pip compiles the bytecode while installing: each start then skips compiling about
# 170 modules (0.4 s of CPU), which the time to healthy counts. So no
# PYTHONDONTWRITEBYTECODE here.
# Only the locked versions are in /wheels, and nothing comes from an index.
RUN pip install --no-cache-dir --no-index --find-links /wheels sounding && rm -rf /wheels
ENV SOUNDING_DATABASE_URL=sqlite:////data/sounding.db \
    PYTHONUNBUFFERED=1
# Numeric, so that Kubernetes' runAsNonRoot can check it without reading /etc/passwd.
USER 10001:10001
WORKDIR /data
VOLUME ["/data"]
# 3000: the ingest API, /health, /metrics and the dashboard; 4317: OTLP/gRPC.
# (4318, OTLP/HTTP, is off unless receivers.otlp_http.enabled: publish it then.)
EXPOSE 3000 4317
# Python, not curl: the slim image has no curl. Any answer but 200 (a 503 while the
# store is down) is unhealthy.
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/health' % os.environ.get('SOUNDING_HTTP_PORT', '3000'), timeout=2)"]
ENTRYPOINT ["sounding"]
CMD ["serve"]
