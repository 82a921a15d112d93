"""The proxy's own answers, read from proxy/api.inc (no nginx needed): every
status nginx can answer by itself is sent to one of its JSON pages, and each
page says what common/contract.py says. tests/contract/test_hostile_http.py checks the
same through a real nginx."""

import re

from common.contract import METHOD_NOT_ALLOWED, NOT_FOUND, PROXY_MESSAGES
from tools.proxy import RULES

# The error pages built into nginx 1.22 (src/http/ngx_http_special_response.c),
# but for the redirects and the TLS ones (495-497: no TLS here). 494 is its
# "request header too large", sent as 400 unless an error_page says otherwise.
NGINX_PAGES = {
    400, 401, 402, 403, 404, 405, 406, 408, 409, 410, 411, 412, 413, 414, 415,
    416, 421, 429, 494, 500, 501, 502, 503, 504, 505, 507,
}  # fmt: skip
# What the client gets instead, where api.inc changes the status.
RESTATED = {494: 431, 502: 503, 504: 503}


def error_pages():
    """{nginx status: (status sent, page)} from api.inc's error_page lines."""
    pages = {}
    for codes, status, uri in re.findall(
        r"^error_page ([\d ]+?) (?:=(\d*) )?(\S+);", RULES.read_text(), re.MULTILINE
    ):
        for code in map(int, codes.split()):
            sent = int(status) if status else code
            pages[code] = (sent, uri.replace("$status", str(code)))
    return pages


def page_bodies():
    """{page URI: the JSON it returns} for the one-line pages (a header
    before it: the door's 401 and 429)."""
    page = r"location = (\S+) \{ (?:add_header [^;]+; )?return 200 '(.*)'; \}"
    found = re.findall(page, RULES.read_text())
    return dict(found)


def test_every_status_nginx_can_answer_has_a_json_page():
    pages = error_pages()
    assert set(pages) == NGINX_PAGES
    for code, (sent, _uri) in pages.items():
        assert sent == RESTATED.get(code, code)


def test_each_page_says_what_the_contract_says():
    bodies = page_bodies()
    for code, (sent, uri) in error_pages().items():
        if code == 405:  # the route's 405 with Allow, or 404: test_hostile_http
            continue
        assert bodies[uri] == f'{{"error":"{PROXY_MESSAGES[sent]}"}}', code


def test_the_method_page_answers_as_the_apps():
    text = RULES.read_text()
    block = text[text.index("location = /.proxy-error/405 {") :]
    block = block[: block.index("\n    }\n")]
    assert block.count(f'return 405 \'{{"error":"{METHOD_NOT_ALLOWED}"}}\';') == 2
    assert f'return 404 \'{{"error":"{NOT_FOUND}"}}\';' in block
