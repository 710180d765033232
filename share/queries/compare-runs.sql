-- compare-runs.sql -- Which leaks did a second run add or grow?
--
-- Sites are matched by function, source file and line (not by address,
-- not by object path), so runs of two different builds compare.  Lists
-- the sites whose leaked bytes are higher in :feature than in :base
-- (defaults: the latest run against the one before it), with both sides.
--   sqlite3 -header -column -cmd '.param set :base 1' -cmd '.param set :feature 2' run.db < compare-runs.sql
WITH
base_run AS (SELECT coalesce (:base, (SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET 1)) AS id),
feature_run AS (SELECT coalesce (:feature, (SELECT max (id) FROM runs)) AS id),
base AS (
	SELECT s.function, s.file, s.line, sum (st.leaked_blocks) AS blocks, sum (st.leaked_bytes) AS bytes
	FROM site_stats st JOIN sites s ON s.id = st.site_id
	WHERE st.run_id = (SELECT id FROM base_run)
	GROUP BY s.function, s.file, s.line),
feature AS (
	SELECT s.function, s.file, s.line, sum (st.leaked_blocks) AS blocks, sum (st.leaked_bytes) AS bytes
	FROM site_stats st JOIN sites s ON s.id = st.site_id
	WHERE st.run_id = (SELECT id FROM feature_run)
	GROUP BY s.function, s.file, s.line)
SELECT f.function,
       CASE WHEN f.file = '' THEN '' ELSE f.file || ':' || f.line END AS location,
       coalesce (b.blocks, 0) AS base_blocks, f.blocks AS feature_blocks,
       coalesce (b.bytes, 0) AS base_bytes, f.bytes AS feature_bytes,
       f.bytes - coalesce (b.bytes, 0) AS growth
FROM feature f LEFT JOIN base b
	ON b.function = f.function AND b.file = f.file AND b.line = f.line
WHERE f.bytes > coalesce (b.bytes, 0)
ORDER BY growth DESC;
