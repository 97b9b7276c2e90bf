"""The admin page (/admin/ui): behind the admin key (a session cookie holding an HMAC,
never the key), the spend of `GET /admin/spend`, the report's plots as SVG, the quota-hit
alarm and the escalations, every value escaped. In process for the rules; in a real
headless Chromium (playwright) against a real gateway for what an operator sees."""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Iterator
from html import escape
from pathlib import Path

import openai
import pytest
import yaml

from gateway.ops.admin_page import COOKIE, SESSION_S, session_token, session_valid
from gateway.tenancy.keys import key_hash
from tests.inprocess import InProcessGateway, running
from tests.servers import ADMIN_KEY, GatewayProc, edit_policy, start_gateway

HOSTILE_TENANT = "<script>alert(1)</script>"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def add_tenant(root: Path, name: str, plan: str = "basic") -> None:
    path = root / "policies" / "tenants.yaml"
    tenants = yaml.safe_load(path.read_text())
    tenants["tenants"][name] = {"plan": plan, "key_sha256": key_hash(f"gk-{len(name)}-idle")}
    path.write_text(yaml.safe_dump(tenants))


@pytest.fixture
def page_gateway(tmp_path: Path) -> Iterator[InProcessGateway]:
    """In process on SQLite, with a tenant whose name is markup, and a catalog quota
    small enough for a few long turns to hit it."""
    for gw in running(tmp_path, f"sqlite:///{tmp_path / 'gateway.db'}"):
        add_tenant(tmp_path, HOSTILE_TENANT)
        edit_policy(tmp_path, {"classes.catalog.quota_tokens": 1200})
        gw.restart()
        yield gw


def log_in(gw: InProcessGateway, key: str = ADMIN_KEY) -> int:
    reply = gw.http.post("/admin/ui/login", data={"key": key}, follow_redirects=False)
    return reply.status_code


def converse(client: openai.OpenAI, name: str, cls: str, turns: int, words: int = 30) -> None:
    messages: list[dict[str, str]] = []
    for n in range(turns):
        messages.append(
            {"role": "user", "content": f"{name} turn {n}: " + "still waiting " * words}
        )
        reply = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=messages,  # type: ignore[arg-type]
            extra_headers={"X-Conversation-Id": name, "X-Conversation-Class": cls},
        )
        messages.append({"role": "assistant", "content": reply.choices[0].message.content or ""})


def test_the_page_needs_the_admin_key(page_gateway: InProcessGateway) -> None:
    http = page_gateway.http
    first = http.get("/admin/ui", follow_redirects=False)
    assert first.status_code == 303 and first.headers["location"] == "/admin/ui/login"
    assert "<form" in http.get("/admin/ui/login").text
    assert log_in(page_gateway, "not-the-key") == 401
    assert COOKIE not in http.cookies
    assert http.get("/admin/ui", follow_redirects=False).status_code == 303
    # The admin key as a bearer token is no session either: the page takes the cookie.
    bearer = {"Authorization": f"Bearer {ADMIN_KEY}"}
    assert http.get("/admin/ui", headers=bearer, follow_redirects=False).status_code == 303

    reply = http.post("/admin/ui/login", data={"key": ADMIN_KEY}, follow_redirects=False)
    assert reply.status_code == 303 and reply.headers["location"] == "/admin/ui"
    cookie = reply.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/admin/ui" in cookie
    value = http.cookies[COOKIE]
    assert ADMIN_KEY not in value and key_hash(ADMIN_KEY) not in value
    page = http.get("/admin/ui")
    assert page.status_code == 200 and "Tenants and spend" in page.text
    assert "script-src" not in page.headers["content-security-policy"]  # none allowed
    assert page.headers["cache-control"] == "no-store"

    out = http.post("/admin/ui/logout", follow_redirects=False)
    assert out.status_code == 303 and "Max-Age=0" in out.headers["set-cookie"]
    assert http.get("/admin/ui", follow_redirects=False).status_code == 303


def test_a_session_is_an_hmac_that_expires() -> None:
    token = session_token("k", 2_000_000_000)
    assert session_valid("k", token, 1_999_999_999)
    assert not session_valid("k", token, 2_000_000_000)  # expired
    assert not session_valid("another key", token, 0)  # the admin key changed
    forged = "2000000001." + token.partition(".")[2]  # a later expiry, the old MAC
    assert not session_valid("k", forged, 0)
    plain = hashlib.sha256(b"k").hexdigest()
    full_width = "\uff12\uff10\uff10\uff10.x"  # digits, to str.isdigit; not to int()
    for bad in ("", "k", plain, f"2000000000.{plain}", full_width, "9" * 40 + ".x"):
        assert not session_valid("k", bad, 0), bad
    assert SESSION_S <= 24 * 3600


def test_no_admin_key_means_no_page(tmp_path: Path) -> None:
    for gw in running(
        tmp_path, f"sqlite:///{tmp_path / 'g.db'}", admin={"key_env": "H5_UNSET_ADMIN_KEY"}
    ):
        assert gw.gateway.settings.admin_key is None
        assert gw.http.get("/admin/ui").status_code == 403
        assert gw.http.get("/admin/ui/login").status_code == 403
        assert log_in(gw, "") == 403 and log_in(gw, "anything") == 403


def test_the_page_shows_spend_alarms_and_escalations_escaped(
    page_gateway: InProcessGateway,
) -> None:
    converse(page_gateway.openai("acme"), "browse-1", "catalog", 6, words=120)
    converse(page_gateway.openai("globex"), "dispute-1", "dispute", 9)
    assert log_in(page_gateway) == 303
    html = page_gateway.http.get("/admin/ui").text
    assert "<script" not in html.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html

    spend = {r["tenant"]: r for r in page_gateway.admin("/admin/spend").json()["tenants"]}
    for tenant, row in spend.items():
        cells = re.search(
            rf'data-tenant="{re.escape(escape(tenant))}">.*?class="n cost">([^<]*)<', html
        )
        assert cells is not None, tenant
        assert cells.group(1) == row["cost_usd"]
    assert spend[HOSTILE_TENANT]["cost_usd"] == "0.0000000000"  # never "0E-10"

    assert html.count("<svg") == 2 and "Concentration of cost" in html and "100%" in html
    report = page_gateway.admin("/admin/report").json()
    assert report["alarms"] and all(a in html for a in map(escape, report["alarms"]))
    assert "ALARM class catalog" in html
    escalated = [e["conversation"] for e in report["escalations"]]
    assert "dispute-1" in escalated
    assert re.search(r"<td>globex</td><td>dispute-1</td><td>dispute</td>", html)


def test_the_keys_section_lists_keys_never_their_secret(page_gateway: InProcessGateway) -> None:
    bearer = {"Authorization": f"Bearer {ADMIN_KEY}"}
    made = page_gateway.http.post(
        "/admin/tenants/acme/keys", json={"name": "<i>ci</i>"}, headers=bearer
    )
    assert made.status_code in (200, 201), made.text
    key_id, secret = made.json()["id"], made.json()["key"]
    assert log_in(page_gateway) == 303
    keys = page_gateway.http.get("/admin/ui").text.split('id="keys"')[1].split("</section>")[0]
    assert key_id in keys and "&lt;i&gt;ci&lt;/i&gt;" in keys and "<i>" not in keys
    assert secret not in keys and key_hash(secret) not in keys
    assert "file:acme" in keys and "tenants.yaml" in keys
    revoked = page_gateway.http.delete(f"/admin/keys/{key_id}", headers=bearer)
    assert revoked.status_code == 200, revoked.text
    keys = page_gateway.http.get("/admin/ui").text.split('id="keys"')[1]
    assert re.search(rf"<code>{key_id}</code></td><td>[^<]*</td><td>revoked ", keys)


def test_a_bad_period_is_a_400_page(page_gateway: InProcessGateway) -> None:
    assert log_in(page_gateway) == 303
    reply = page_gateway.http.get("/admin/ui", params={"period": "<b>2024-13</b>"})
    assert reply.status_code == 400 and reply.headers["content-type"].startswith("text/html")
    assert "YYYY-MM" in reply.text and "<b>" not in reply.text
    other = page_gateway.http.get("/admin/ui", params={"period": "2020-01"})
    assert other.status_code == 200 and 'value="2020-01"' in other.text


# --- In a real browser -------------------------------------------------------------


def browser_or_fail() -> object:
    """playwright's sync API, driving Debian's Chromium; a missing part fails the test
    with how to install it (never skipped: the acceptance names this test)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(
            "the admin page test needs playwright: `.venv/bin/pip install playwright` "
            "(it drives the system Chromium; never run `playwright install`)"
        )
    if shutil.which(CHROMIUM) is None:
        pytest.fail(f"the admin page test needs Chromium at {CHROMIUM}: `apt-get install chromium`")
    return sync_playwright


@pytest.fixture
def real_gateway(tmp_path: Path, simulator_url: str) -> Iterator[GatewayProc]:
    gw = start_gateway(tmp_path, simulator_url, f"sqlite:///{tmp_path / 'gateway.db'}")
    try:
        add_tenant(tmp_path, HOSTILE_TENANT)
        gw.restart()
        yield gw
    finally:
        gw.stop()


def test_the_admin_page_in_headless_chromium(real_gateway: GatewayProc, tmp_path: Path) -> None:
    sync_playwright = browser_or_fail()
    gw = real_gateway
    with openai.OpenAI(base_url=gw.v1, api_key=gw.keys["acme"], max_retries=0) as client:
        for n in range(3):
            client.chat.completions.create(
                model="gpt-4o-mini",
                messages=[{"role": "user", "content": f"question {n} about my order"}],
                extra_headers={"X-Conversation-Id": f"c-{n}"},
            )
    spend = {r["tenant"]: r for r in gw.admin("/admin/spend").json()["tenants"]}
    assert spend["acme"]["requests"] == 3 and spend["acme"]["cost_usd"] != "0.0000000000"

    with sync_playwright() as pw:  # type: ignore[operator]
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{gw.url}/admin/ui")
            assert page.url.endswith("/admin/ui/login")  # refused: on to the login form
            assert page.locator("table").count() == 0

            page.fill("input[name=key]", "wrong-key")
            with page.expect_response(f"{gw.url}/admin/ui/login") as wrong:
                page.click("button[type=submit]")
            assert wrong.value.status == 401
            assert "Wrong admin key" in page.inner_text("body")
            assert page.context.cookies() == []

            page.fill("input[name=key]", ADMIN_KEY)
            page.click("button[type=submit]")
            page.wait_for_url(f"{gw.url}/admin/ui")
            (cookie,) = page.context.cookies()
            assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
            assert ADMIN_KEY not in cookie["value"]

            row = page.locator("tr.tenant", has_text="acme")
            assert row.locator("td.cost").inner_text() == spend["acme"]["cost_usd"]
            assert row.locator("td.plan").inner_text() == spend["acme"]["plan"]
            hostile = page.locator("tr.tenant td.name", has_text="alert(1)")
            assert hostile.inner_text() == HOSTILE_TENANT  # shown as text, never run
            assert page.locator("svg.concentration polyline").count() >= 2
            assert page.locator("svg.turn-cost rect").count() >= 1
            assert "file:acme" in page.locator("#keys").inner_text()

            shot = tmp_path / "admin.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 1000 and shot.read_bytes()[:4] == b"\x89PNG"

            page.click("text=Log out")
            page.wait_for_url(f"{gw.url}/admin/ui/login")
            page.goto(f"{gw.url}/admin/ui")
            assert page.url.endswith("/admin/ui/login")
        finally:
            browser.close()
