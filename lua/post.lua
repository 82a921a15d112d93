-- POST /reviews/ with the body given after wrk's "--", plus the JSON report of
-- report.lua. The body names the run's own film (bench/sut/run_film.py):
--
--     wrk --script lua/post.lua URL/reviews/ -- '{"film_id": 1001, "rating": 4}'
--
-- A second argument names the file of the door's write token
-- (./benchmark.sh --write-token-file, checked there: bench/write_token.py):
-- every request then carries "Authorization: Bearer <token>".

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
   if args[2] then
      local file = assert(io.open(args[2]))
      local token = file:read("*l"):gsub("%s+$", "")
      file:close()
      wrk.headers["Authorization"] = "Bearer " .. token
   end
end
