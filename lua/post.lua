-- POST /reviews/ with the article's body, plus the JSON report of report.lua.
--
--     wrk --script lua/post.lua URL/reviews/

wrk.method = "POST"
wrk.body = '{"film_id": 995, "rating": 4}'
wrk.headers["Content-Type"] = "application/json"

-- report.lua lives beside this file, wherever wrk was started from.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "report.lua")
