-- leaks-in-library.sql -- Which leaks happen inside one library?
--
-- Leaked blocks allocated by code of an object matching :lib (a LIKE
-- pattern on the object's path; default '%', every object): charged to a
-- site in it, or made through a wrapper in it (a frame of the stack at or
-- inside the charged one: strdup in libc charged to its caller).  Callers
-- further out do not count: every stack passes through libc's
-- __libc_start_main.  Grouped by the site charged; :run defaults to the
-- latest run.
--   sqlite3 -header -column -cmd ".param set :lib '%libfoo.so%'" run.db < leaks-in-library.sql
SELECT s.object, s.function,
       CASE WHEN s.file = '' THEN '' ELSE s.file || ':' || s.line END AS location,
       count (*) AS leaked_blocks, sum (l.size) AS leaked_bytes
FROM leaks l JOIN sites s ON s.id = l.site_id
WHERE l.run_id = coalesce (:run, (SELECT max (id) FROM runs))
  AND (s.object LIKE coalesce (:lib, '%')
       OR EXISTS (SELECT 1 FROM frames f JOIN sites fs ON fs.id = f.site_id
                  JOIN stacks st ON st.id = f.stack_id
                  WHERE f.stack_id = l.stack_id AND f.level <= st.site_level
                    AND fs.object LIKE coalesce (:lib, '%')))
GROUP BY s.id
ORDER BY leaked_bytes DESC, leaked_blocks DESC;
