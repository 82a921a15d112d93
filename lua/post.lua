-- POST /reviews/ with the body given after wrk's "--", plus the JSON report of
-- report.lua. The body names the run's own film (bench/stack/run_film.py):
--
--     wrk --script lua/post.lua URL/reviews/ -- '{"film_id": 1001, "rating": 4}'

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

-- report.lua lives beside this file, wherever wrk was started from.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "report.lua")

-- wrk calls init(args) in each thread before it formats the request it sends.
local report_init = init
function init(args)
   report_init(args)
   if not args[1] then
      error("post.lua needs the body after --")
   end
   wrk.body = args[1]
end
