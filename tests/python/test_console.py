"""The web console in a real browser: Debian's Chromium driven headless by
playwright (never `playwright install`), accessibility checked by axe-core
(axe-playwright-python), against the real server with --auth required.

- sign in with an API key; browse the tree to a table and see its schema,
  versions and a tag made through pylance;
- a user with a reader grant on one table sees that table alone;
- a table dropped under a trash grace is on the trash page with its
  deadline; undropped by keyboard alone, it is back in the tree and in
  pylance;
- a compaction submitted from the tasks page is seen to finish;
- the policy, grants and audit pages show what the API answers;
- with --auth none there is no sign-in, and with warehouses the tree runs
  project > warehouse > namespace > table.
Every page: no serious or critical axe finding, and a screenshot kept under
the test's temp dir. Without Chromium these tests skip, except under
CI=true or LANCE_CATALOG_TEST_CONSOLE_REQUIRED=1 (.ci/run), where that is
an error."""

import os
import re
import shutil
import tempfile
from datetime import datetime, timezone

import lance
import lance_namespace
import pytest
from conftest import fresh, ipc, new_root, sample, start_server
from lance_namespace import (
    CreateNamespaceRequest,
    CreateTableRequest,
    DropTableRequest,
    InsertIntoTableRequest,
)
from test_auth import SECRET, call, jwt

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
HAVE = os.path.exists(CHROMIUM)
try:
    from axe_playwright_python.sync_playwright import Axe
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # pragma: no cover - said below
    HAVE = False
REQUIRED = os.environ.get("CI") == "true" or os.environ.get("LANCE_CATALOG_TEST_CONSOLE_REQUIRED") == "1"
if not HAVE and REQUIRED:
    raise RuntimeError("Chromium, playwright or axe-playwright-python is missing: the console would go untested")
pytestmark = pytest.mark.skipif(not HAVE, reason="Chromium or playwright is not installed (apt-get install chromium; pip install playwright axe-playwright-python)")

ROOT = {"authorization": f"Bearer {jwt('root')}"}


@pytest.fixture(scope="module")
def server():
    started = start_server(new_root("lance-catalog-console-"), "--auth", "required", "--bootstrap-admin", "root",
                           "--jwt-secret", SECRET, "--trash-grace", "1d", "--task-poll", "0.2")
    yield started
    started["proc"].terminate()
    started["proc"].wait(timeout=30)


def key_for(url, principal):
    status, made, _ = call(f"{url}/v1/api-keys", "POST", {"principal": principal}, ROOT)
    assert status == 200, made
    return made["key"]


def admin(url):
    return lance_namespace.connect("rest", {"uri": url, "header.Authorization": ROOT["authorization"]})


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--disable-dev-shm-usage"])
        yield b
        b.close()


@pytest.fixture
def page(browser, tmp_path):
    context = browser.new_context()
    pg = context.new_page()
    errors = []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.shots = tmp_path
    yield pg
    context.close()
    # No script error and no policy violation on any page.
    assert not [e for e in errors if "Content Security Policy" in e or "TypeError" in e], errors


def checked(page, name):
    """Once a page shows: no serious or critical axe finding; a screenshot."""
    page.screenshot(path=str(page.shots / f"{name}.png"), full_page=True)
    found = Axe().run(page).response["violations"]
    bad = [(v["id"], v["impact"], v["help"]) for v in found if v["impact"] in ("serious", "critical")]
    assert not bad, (name, bad)


def sign_in(page, url, key):
    page.goto(f"{url}/console/")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    checked(page, "sign-in")
    page.get_by_label("API key or bearer token", exact=True).fill(key)
    page.get_by_role("form", name="With an API key or bearer token").get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", level=1, name="Estate")).to_be_visible()


def table_with_tag(url, team):
    ns = admin(url)
    ns.create_namespace(CreateNamespaceRequest(id=[team]))
    ns.create_table(CreateTableRequest(id=[team, "orders"]), ipc(sample(0, 10)))
    ns.insert_into_table(InsertIntoTableRequest(id=[team, "orders"]), ipc(sample(10, 5)))
    ds = lance.dataset(namespace_client=ns, table_id=[team, "orders"])
    ds.tags.create("release-1", 1)
    status, body, _ = call(f"{url}/v1/table/{team}$orders/branches/create", "POST",
                           {"name": "dev", "from_version": 1}, ROOT)
    assert status == 200, body
    return ns


def test_sign_in_and_browse_to_a_table(server, page):
    url, team = server["url"], fresh("con")
    table_with_tag(url, team)
    sign_in(page, url, key_for(url, "root"))
    checked(page, "estate")
    page.get_by_role("link", name=team, exact=True).click()
    expect(page.get_by_role("heading", level=1, name=f"Namespace {team}")).to_be_visible()
    # The heading took the focus, for screen readers.
    expect(page.get_by_role("heading", level=1)).to_be_focused()
    checked(page, "namespace")
    page.get_by_role("link", name="orders", exact=True).click()
    expect(page.get_by_role("heading", level=1, name=f"Table {team}.orders")).to_be_visible()
    schema = page.get_by_role("table", name="Schema")
    for column in ("id", "x", "s"):
        expect(schema.get_by_role("cell", name=column, exact=True)).to_be_visible()
    expect(page.get_by_text("15", exact=True)).to_be_visible()
    versions = page.get_by_role("table", name="Versions (newest first)")
    expect(versions.get_by_role("row")).to_have_count(3)
    expect(versions.locator("time").first).to_have_attribute("datetime", re.compile(r"^\d{4}-\d\d-\d\dT"))
    tags = page.get_by_role("table", name="Tags")
    expect(tags.get_by_role("cell", name="release-1")).to_be_visible()
    dev = page.get_by_role("table", name="Branches").get_by_role("row").filter(has_text="dev")
    expect(dev.get_by_role("cell")).to_have_text(["dev", "main", "1", re.compile(r"\d")])
    breadcrumb = page.get_by_role("navigation", name="Breadcrumb")
    expect(breadcrumb.get_by_role("link", name="orders")).to_have_attribute("aria-current", "page")
    checked(page, "table")
    # The footer names the server's version.
    expect(page.locator("footer")).to_contain_text("lance-catalog 0.")


def test_a_reader_sees_only_their_table(server, page):
    url, team = server["url"], fresh("conr")
    ns = table_with_tag(url, team)
    ns.create_table(CreateTableRequest(id=[team, "secret"]), ipc(sample(0, 3)))
    status, body, _ = call(f"{url}/v1/grants", "POST",
                           {"resource": {"kind": "table", "id": [team, "orders"]}, "principal": "dora", "relation": "reader"},
                           ROOT)
    assert status == 200, body
    sign_in(page, url, key_for(url, "dora"))
    page.goto(f"{url}/console/#/ns/{team}")
    tables = page.get_by_role("region", name="Tables")
    expect(tables.get_by_role("link", name="orders", exact=True)).to_be_visible()
    expect(tables.get_by_role("link")).to_have_count(1)
    checked(page, "reader-namespace")
    page.goto(f"{url}/console/#/table/{team}$secret")
    expect(page.get_by_text("You may not see overview.")).to_be_visible()
    checked(page, "reader-denied")


def test_a_local_user_signs_in_with_a_password_and_keeps_only_a_session(server, page):
    url, team = server["url"], fresh("conu")
    table_with_tag(url, team)
    password = "vera's long passphrase"
    status, body, _ = call(f"{url}/v1/users", "POST", {"username": "vera", "password": password}, ROOT)
    assert status == 200, body
    status, body, _ = call(f"{url}/v1/grants", "POST",
                           {"resource": {"kind": "namespace", "id": [team]}, "principal": "vera", "relation": "reader"},
                           ROOT)
    assert status == 200, body
    page.goto(f"{url}/console/")
    form = page.get_by_role("form", name="With a user name and password")
    form.get_by_label("User name").fill("vera")
    form.get_by_label("Password").fill("not her password")
    form.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_have_text("That was not accepted.")
    checked(page, "sign-in-refused")
    form.get_by_label("Password").fill(password)
    form.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", level=1, name="Estate")).to_be_visible()
    kept = page.evaluate("JSON.stringify(sessionStorage)")
    assert "lcs_" in kept and password not in kept
    page.goto(f"{url}/console/#/table/{team}$orders")
    expect(page.get_by_role("heading", level=1, name=f"Table {team}.orders")).to_be_visible()
    expect(page.get_by_text("15", exact=True)).to_be_visible()
    checked(page, "local-user-table")


def tab_to(page, name, limit=80):
    """Press Tab until the focused element is the one named `name`."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        focused = page.evaluate("() => document.activeElement && (document.activeElement.getAttribute('aria-label') || document.activeElement.textContent)")
        if focused and focused.strip() == name:
            return
    raise AssertionError(f"Tab never reached {name!r}")


def test_trash_and_undrop_by_keyboard(server, page):
    url, team = server["url"], fresh("cont")
    ns = table_with_tag(url, team)
    ns.drop_table(DropTableRequest(id=[team, "orders"]))
    status, trash, _ = call(f"{url}/v1/trash", "GET", None, ROOT)
    entry = next(e for e in trash["entries"] if e["id"] == [team, "orders"])
    sign_in(page, url, key_for(url, "root"))
    page.goto(f"{url}/console/#/trash")
    row = page.get_by_role("row").filter(has_text=f"table {team}.orders")
    expect(row).to_be_visible()
    deadline = datetime.fromtimestamp(entry["expires_at_ms"] / 1000, tz=timezone.utc)
    expect(row.locator("time").nth(1)).to_have_attribute(
        "datetime", deadline.isoformat(timespec="milliseconds").replace("+00:00", "Z"))
    checked(page, "trash")
    tab_to(page, f"Undrop table {team}.orders")
    page.keyboard.press("Enter")
    # The confirmation takes the focus; Enter confirms.
    expect(page.get_by_role("button", name="Confirm undrop")).to_be_focused()
    checked(page, "trash-confirm")
    page.keyboard.press("Enter")
    expect(page.locator("#announcer")).to_have_text(f"table {team}.orders was restored.")
    expect(page.get_by_role("row").filter(has_text=f"table {team}.orders")).to_have_count(0)
    page.goto(f"{url}/console/#/ns/{team}")
    expect(page.get_by_role("region", name="Tables").get_by_role("link", name="orders", exact=True)).to_be_visible()
    assert lance.dataset(namespace_client=ns, table_id=[team, "orders"]).count_rows() == 15


def test_a_compaction_submitted_from_the_console_finishes(server, page):
    url, team = server["url"], fresh("conc")
    table_with_tag(url, team)
    sign_in(page, url, key_for(url, "root"))
    page.goto(f"{url}/console/#/table/{team}$orders/tasks")
    expect(page.get_by_role("heading", level=1, name=f"Tasks of {team}.orders")).to_be_visible()
    page.get_by_role("button", name="Submit a compaction").click()
    tasks = page.get_by_role("table", name="Tasks (newest first)")
    expect(tasks.get_by_text("completed")).to_be_visible(timeout=60_000)
    expect(tasks).to_contain_text("fragments 2 → 1")
    expect(page.locator("#announcer")).to_have_text("Compaction completed.")
    checked(page, "tasks")


def test_policy_grants_and_audit_pages(server, page):
    url, team = server["url"], fresh("conp")
    table_with_tag(url, team)
    status, body, _ = call(f"{url}/v1/namespace/{team}/maintenance_policy", "POST", {"compaction": False}, ROOT)
    assert status == 200, body
    call(f"{url}/v1/grants", "POST",
         {"resource": {"kind": "table", "id": [team, "orders"]}, "principal": "erin", "relation": "reader"}, ROOT)
    sign_in(page, url, key_for(url, "root"))
    page.goto(f"{url}/console/#/policy/table/{team}$orders")
    row = lambda: page.get_by_role("table", name="Policy fields").get_by_role("row").filter(
        has=page.get_by_role("cell", name="compaction", exact=True))
    expect(row()).to_contain_text("inherited")
    checked(page, "policy")
    page.goto(f"{url}/console/#/policy/namespace/{team}")
    expect(row()).to_contain_text("set here")
    page.goto(f"{url}/console/#/grants/table/{team}$orders")
    expect(page.get_by_role("table", name="Grants").get_by_role("cell", name="erin")).to_be_visible()
    checked(page, "grants")
    page.get_by_role("link", name="Audit").click()
    expect(page.get_by_role("table", name="Events (oldest first)")).to_be_visible()
    checked(page, "audit")


def test_without_auth_the_tree_runs_from_projects_to_a_table(page):
    """With --auth none there is no sign-in; with warehouses, the tree
    runs project > warehouse > namespace > table."""
    east = tempfile.mkdtemp(prefix="lance-catalog-console-east-")
    started = start_server(new_root("lance-catalog-console-open-"), "--warehouses", "on")
    url = started["url"]
    try:
        for path, body in (("/v1/projects", {"project_id": "acme"}),
                           ("/v1/warehouses", {"warehouse_id": "east", "project_id": "acme", "root": east})):
            status, made, _ = call(f"{url}{path}", "POST", body)
            assert status == 200, made
        team = fresh("conw")
        ns = lance_namespace.connect("rest", {"uri": f"{url}/warehouses/east"})
        ns.create_namespace(CreateNamespaceRequest(id=[team]))
        ns.create_table(CreateTableRequest(id=[team, "events"]), ipc(sample(0, 4)))
        page.goto(f"{url}/console/")
        expect(page.get_by_role("heading", level=1, name="Estate")).to_be_visible()
        expect(page.get_by_role("button", name="Sign out")).to_have_count(0)
        page.get_by_role("link", name="acme", exact=True).click()
        expect(page.get_by_role("heading", level=1, name="Project acme")).to_be_visible()
        checked(page, "project")
        page.get_by_role("link", name="east", exact=True).click()
        expect(page.get_by_role("heading", level=1, name="Warehouse east")).to_be_visible()
        checked(page, "warehouse")
        page.get_by_role("link", name=team, exact=True).click()
        page.get_by_role("link", name="events", exact=True).click()
        expect(page.get_by_role("heading", level=1, name=f"Table {team}.events")).to_be_visible()
        crumbs = page.get_by_role("navigation", name="Breadcrumb")
        for step in ("Estate", "Project acme", "Warehouse east", team, "events"):
            expect(crumbs.get_by_role("link", name=step, exact=True)).to_be_visible()
        expect(page.get_by_role("table", name="Schema").get_by_role("cell", name="id", exact=True)).to_be_visible()
    finally:
        started["proc"].terminate()
        started["proc"].wait(timeout=30)
