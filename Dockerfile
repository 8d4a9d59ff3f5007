# One image for every service of the QSG: queue managers (qsg serve), the one-shot migration
# (qsg db upgrade) and the nightly analytics (qsg analytics schedule). Java is there for PySpark.
FROM python:3.11-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless curl \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /srv/qsg
COPY pyproject.toml README.md ./
COPY app ./app
COPY migrations ./migrations
COPY spark_jobs ./spark_jobs
RUN pip install --no-cache-dir .
ENV QSG_HOST=0.0.0.0 QSG_PORT=9441
EXPOSE 9441
CMD ["qsg", "serve"]
