"""The door: every route needs a token; the link trades it for a cookie; the JSON API takes a bearer
token; state-changing requests made with the cookie need the CSRF header and their own origin."""

from __future__ import annotations

from pathlib import Path

import pytest

from rubric_studio.web._tokens import read_tokens, revoke, token_hash, write_tokens
from tests.web.conftest import TOKENS, Labeller, bearer, make_labeller

ROUTES = [("GET", "/"), ("GET", "/static/app.js"), ("GET", "/static/app.css"), ("GET", "/api/me"),
          ("GET", "/api/progress"), ("GET", "/api/queue"), ("GET", "/api/overview"), ("GET", "/api/samples/next"),
          ("GET", "/api/samples/s0"), ("GET", "/api/labels/s0"), ("PUT", "/api/labels/s0"),
          ("DELETE", "/api/labels/s0"), ("GET", "/no/such/route")]
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_every_route_is_401_without_a_token(labeller: Labeller, method: str, path: str):
    answer = labeller.client().request(method, path, json={"verdict": "pass"} if method == "PUT" else None)
    assert answer.status_code == 401
    assert answer.headers["content-security-policy"] == CSP


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_a_wrong_bearer_token_or_forged_cookie_is_401(labeller: Labeller, method: str, path: str):
    client = labeller.client()
    assert client.request(method, path, headers={"Authorization": "Bearer not-a-token"}).status_code == 401
    client.cookies.set("rubric_studio", "alice." + "0" * 64)
    assert client.request(method, path).status_code == 401


def test_the_link_trades_the_token_for_a_strict_httponly_cookie_and_redirects_without_it(labeller: Labeller):
    client = labeller.client()
    answer = client.get(f"/?token={TOKENS['alice']}&keep=1", follow_redirects=False)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/?keep=1"
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert TOKENS["alice"] not in cookie  # the cookie is a MAC, never the token
    page = client.get("/")
    assert page.status_code == 200
    assert 'data-person="alice"' in page.text and 'data-role="annotator"' in page.text
    # a second device: the same link works again
    assert labeller.client("alice").get("/api/me").json()["person"] == "alice"


def test_a_wrong_link_is_401_and_sets_no_cookie(labeller: Labeller):
    answer = labeller.client().get("/?token=guess", follow_redirects=False)
    assert answer.status_code == 401
    assert "set-cookie" not in answer.headers


def test_security_headers_on_pages_api_static_and_refusals(labeller: Labeller):
    client = labeller.client("alice")
    for path in ("/", "/api/progress", "/static/app.js", "/static/app.css", "/api/samples/nope"):
        headers = client.get(path).headers
        assert headers["content-security-policy"] == CSP
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "no-referrer"
        assert headers["cache-control"] == "no-store"


def test_the_page_has_no_inline_script_or_style_and_loads_nothing_from_elsewhere(labeller: Labeller):
    page = labeller.client("alice").get("/").text
    assert "<script>" not in page and "style=" not in page and "<style" not in page
    assert "http://" not in page and "https://" not in page and "//cdn" not in page
    assert '<script src="/static/app.js" defer></script>' in page
    assert 'href="/static/app.css"' in page
    for asset in ("app.js", "app.css"):
        text = labeller.client("alice").get(f"/static/{asset}").text
        assert "http://" not in text and "https://" not in text and "@import" not in text and "url(" not in text


def test_the_bearer_token_works_on_the_api_without_csrf(labeller: Labeller):
    client = labeller.client()
    assert client.get("/api/me", headers=bearer("bob")).json() == {
        "person": "bob", "role": "annotator", "csrf": labeller.door.csrf_token(labeller.people["bob"]),
        "rubric": {"name": "demo", "path": str(labeller.rubric)}}
    answer = client.put("/api/labels/s0", json={"verdict": "fail"}, headers=bearer("bob"))
    assert answer.status_code == 200, answer.text
    assert labeller.store().label("s0", "bob").verdict == "fail"


def test_a_cookie_write_without_the_csrf_header_is_refused(labeller: Labeller):
    client = labeller.client("alice")
    answer = client.put("/api/labels/s0", json={"verdict": "pass"})
    assert answer.status_code == 403
    assert "X-CSRF-Token" in answer.json()["error"]
    wrong = client.put("/api/labels/s0", json={"verdict": "pass"}, headers=labeller.csrf("bob"))  # bob's, not alice's
    assert wrong.status_code == 403
    assert client.delete("/api/labels/s0").status_code == 403
    assert labeller.store().label("s0", "alice") is None


def test_a_cookie_write_from_another_origin_is_refused_even_with_the_csrf_header(labeller: Labeller):
    client = labeller.client("alice")
    foreign = {**labeller.csrf("alice"), "Origin": "http://evil.example"}
    answer = client.put("/api/labels/s0", json={"verdict": "pass"}, headers=foreign)
    assert answer.status_code == 403 and "another origin" in answer.json()["error"]
    same = {**labeller.csrf("alice"), "Origin": "http://testserver"}
    assert client.put("/api/labels/s0", json={"verdict": "pass"}, headers=same).status_code == 200
    assert labeller.store().label("s0", "alice").verdict == "pass"


def test_the_csrf_token_is_in_the_page_meta(labeller: Labeller):
    page = labeller.client("alice").get("/").text
    assert f'<meta name="csrf-token" content="{labeller.door.csrf_token(labeller.people["alice"])}">' in page


def test_a_link_followed_from_another_site_asks_again_from_the_page_itself(labeller: Labeller):
    """A SameSite=Strict cookie is not sent on a navigation another site started: the 401 page then
    refreshes itself (a same-site navigation, which sends it); a same-site 401 does not loop."""
    client = labeller.client()
    cross = client.get("/", headers={"Sec-Fetch-Site": "cross-site"})
    assert cross.status_code == 401 and 'http-equiv="refresh"' in cross.text
    same = client.get("/", headers={"Sec-Fetch-Site": "same-origin"})
    assert same.status_code == 401 and "refresh" not in same.text


def test_another_site_cannot_switch_whose_labels_a_browser_writes_without_asking(labeller: Labeller):
    """Login CSRF: a page elsewhere linking to /?token=<someone else's> would make alice label as that
    person unawares. From another site, a browser signed in as alice is asked first; a link pasted in
    the address bar (or followed on this page) switches at once."""
    browser = labeller.client("alice")
    link = f"/?token={TOKENS['bob']}"
    asked = browser.get(link, headers={"Sec-Fetch-Site": "cross-site"}, follow_redirects=False)
    assert asked.status_code == 200 and "set-cookie" not in asked.headers
    assert "Switch person?" in asked.text and "<b>bob</b>" in asked.text and "<b>alice</b>" in asked.text
    assert browser.get("/api/me").json()["person"] == "alice"  # still alice
    pasted = browser.get(link, headers={"Sec-Fetch-Site": "none"}, follow_redirects=False)
    assert pasted.status_code == 303 and "set-cookie" in pasted.headers
    assert browser.get("/api/me").json()["person"] == "bob"
    fresh = labeller.client()  # nobody signed in yet: the link is how a person arrives
    first = fresh.get(link, headers={"Sec-Fetch-Site": "cross-site"}, follow_redirects=False)
    assert first.status_code == 303


def test_revoking_a_kept_token_kills_its_link_bearer_and_cookie_in_a_running_server(tmp_path: Path):
    tokens = tmp_path / "tokens.json"
    write_tokens(tokens, {name: token_hash(TOKENS[name]) for name in ("alice", "bob", "cara", "lena")})
    labeller = make_labeller(tmp_path, tokens_file=tokens)
    browser = labeller.client("bob")
    assert browser.get("/api/me").status_code == 200
    assert revoke(tokens, "bob") is True
    assert "bob" not in read_tokens(tokens)
    assert browser.get("/api/me").status_code == 401  # the cookie
    assert labeller.client().get("/api/me", headers=bearer("bob")).status_code == 401
    assert labeller.client().get(f"/?token={TOKENS['bob']}", follow_redirects=False).status_code == 401
    assert labeller.client("alice").get("/api/me").status_code == 200  # everyone else keeps working


def test_the_tokens_file_holds_hashes_only(tmp_path: Path):
    from rubric_studio.web import issue_tokens

    tokens_file = tmp_path / "tokens.json"
    first, hashes = issue_tokens(["alice", "bob"], tokens_file)
    text = tokens_file.read_text()
    assert all(token and token not in text for token in first.values())
    assert read_tokens(tokens_file) == hashes == {n: token_hash(t) for n, t in first.items()}
    again, hashes_again = issue_tokens(["alice", "bob", "cara"], tokens_file)
    assert again["alice"] is None and again["bob"] is None and again["cara"]  # kept, kept, new
    assert hashes_again["alice"] == hashes["alice"]
    assert set(read_tokens(tokens_file)) == {"alice", "bob", "cara"}
