-- runs.sql -- What runs does this database hold?
--
-- One row per run, oldest first: what was traced and its totals.
--   sqlite3 -header -column run.db < runs.sql
SELECT id, loaded_at, coalesce (exe, "binary", '') AS program, pid, start_time,
       events, allocations, frees, bytes_allocated, peak_live_bytes,
       leaked_blocks, leaked_bytes, bad_frees,
       replace (traces, '
', ' ') AS traces
FROM runs ORDER BY id;
