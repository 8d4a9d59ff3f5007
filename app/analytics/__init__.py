"""Running the nightly analytics job: run status and the nightly schedule (the job itself is
``spark_jobs.activity_daily``)."""
