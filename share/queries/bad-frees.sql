-- bad-frees.sql -- Where is memory freed that was never allocated?
--
-- Frees and reallocs of addresses with no live block (double frees, frees
-- of foreign pointers, or glibc 2.36's own tracing race), by the site of
-- the free, most first, with the first occurrence's trace line.  :run
-- defaults to the latest run.
--   sqlite3 -header -column run.db < bad-frees.sql
SELECT b.function, b.location, b.object, b.bad_frees, b.first_line,
       (SELECT min (kind) || CASE WHEN max (kind) <> min (kind) THEN ',' || max (kind) ELSE '' END
        FROM bad_frees x WHERE x.run_id = b.run_id AND x.site_id = b.site_id) AS kinds
FROM bad_frees_by_site b
WHERE b.run_id = coalesce (:run, (SELECT max (id) FROM runs))
ORDER BY b.bad_frees DESC, b.first_line;
