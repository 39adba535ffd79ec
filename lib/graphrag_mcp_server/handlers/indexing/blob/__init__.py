"""Index versions published to an Azure Blob Storage container, for replicas on hosts with no
shared disk.

Layout under az://CONTAINER/PREFIX/::

    current.json          {"version": ID, "previous": ID, "switched_at": ...}: replaced only by a
                          conditional write (If-Match the ETag the indexer read when it started),
                          so a reader sees one whole version or the one before, never a mixture
    versions/ID/files.json  a version's listing: its files (output/: parquet tables, lancedb/,
                          manifest.json, ...; root/: the settings.yaml and prompts/ it was built
                          and is searched with) by content, written before the switch
    objects/SHA256        the content of a file stored whole (each once)
    packs/ID-N            the pieces of parquet tables (each once; objects.py)
    cache/                graphrag's LLM cache (each entry named by its content's hash, never
                          changed once written)
    indexer.lock          the blob an indexer leases (renewed while it runs): one indexer at a time

The indexer and each replica keep a local copy (their --index-path) in the layout of
indexing/versions.py: the indexer builds there with every incremental step unchanged, then uploads
(publish.py) what the container lacks; a replica (follower.py) puts a new version together beside
the one it serves (its own unchanged files and pieces, the rest downloaded) and switches its
`output` link in one step. A version published before listings (versions/ID/output/ and root/)
is still downloaded whole. current.json's version and previous are never deleted;
older versions once their files are older than the grace period (a replica reads a version only
while downloading it).

One job a module: client.py (where and how: BlobLocation, credentials, storage errors as one line),
versions.py (the version protocol: current.json, uploads, downloads, garbage collection), objects.py
(files by content: listings, pieces, packs), lease.py
(one indexer at a time), publish.py (the indexer's run), follower.py (a replica's copy),
project_tables.py (the tables' ETags of a graphrag project whose output is a container).
"""
