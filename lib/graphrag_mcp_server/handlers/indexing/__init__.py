"""Building and updating an index: documents, readers, graphrag's pipeline with carried-over work,
versions, jobs, the watcher."""
