-- leaks-in-library.sql -- Which leaks happen inside one library?
--
-- Leaked blocks whose allocation went through an object matching :lib (a
-- LIKE pattern on the object's path, default '%': every object), either
-- charged to a site in it or with a frame of their stack in it, grouped
-- by the site they are charged to.  :run defaults to the latest run.
--   sqlite3 -header -column -cmd ".param set :lib '%libfoo.so%'" run.db < leaks-in-library.sql
SELECT s.object, s.function,
       CASE WHEN s.file = '' THEN '' ELSE s.file || ':' || s.line END AS location,
       count (*) AS leaked_blocks, sum (l.size) AS leaked_bytes
FROM leaks l JOIN sites s ON s.id = l.site_id
WHERE l.run_id = coalesce (:run, (SELECT max (id) FROM runs))
  AND (s.object LIKE coalesce (:lib, '%')
       OR EXISTS (SELECT 1 FROM frames f JOIN sites fs ON fs.id = f.site_id
                  WHERE f.stack_id = l.stack_id AND fs.object LIKE coalesce (:lib, '%')))
GROUP BY l.site_id
ORDER BY leaked_bytes DESC, leaked_blocks DESC;
