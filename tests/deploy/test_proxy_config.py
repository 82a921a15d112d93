"""The proxy's own answers, read from proxy/api.inc (no nginx needed): every
status nginx can answer by itself is sent to one of its JSON pages, and each
page says what common/contract.py says. tests/contract/test_hostile_http.py checks the
same through a real nginx."""

import re

from common.admission import RETRY_AFTER
from common.contract import METHOD_NOT_ALLOWED, NOT_FOUND, OVERLOADED, PROXY_MESSAGES
from tools.proxy import RULES
from tools.serve import APPS

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


def page_blocks():
    """{page URI: its location block's text}."""
    text = RULES.read_text()
    starts = [(match.start(), match[1]) for match in re.finditer(r"location = (\S+) \{", text)]
    ends = [start for start, _ in starts[1:]] + [len(text)]
    return {uri: text[start:end] for (start, uri), end in zip(starts, ends, strict=True)}


def page_bodies():
    """{page URI: the JSON it returns}: its last `return 200` (before it, a
    page may add a header, as the door's 401 and 429, or answer otherwise in
    a case of its own, as the 503)."""
    return {
        uri: re.findall(r"return 200 '(.*)';", block)[-1]
        for uri, block in page_blocks().items()
        if "return 200" in block
    }


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


def test_the_unavailable_page_is_the_contracts_refusal_where_no_copy_could_take_it():
    """Each copy at its max_conns (--proxy limit, the Kubernetes image): nginx
    names the upstream block as the address, and the page answers as an app
    past its capacity does (tests/contract/test_admission.py checks it through
    a real nginx); an address, host:port, is a copy that could not answer."""
    block = page_blocks()["/.proxy-error/503"]
    condition = re.search(r'if \(\$upstream_addr ~ "(.+)"\) \{', block)
    for name in ("app", *APPS):  # nginx.conf's upstream block, and k8s.conf's
        assert re.search(condition[1], name)
    for address in ("127.0.0.1:8000", "flask:8000", "10.0.0.5:8000, 10.0.0.6:8000"):
        assert not re.search(condition[1], address)
    case = block[condition.start() :].split("\n        }")[0]
    assert f"add_header Retry-After {RETRY_AFTER} always;" in case
    assert f'return 200 \'{{"error":"{OVERLOADED}"}}\';' in case
